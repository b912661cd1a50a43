#!/bin/sh
test_description='kubeconfig: resolution, origins, redaction and errors'
. "$(dirname "$0")/test-lib.sh"

test_expect_success 'setup a kubeconfig with secrets' '
	mkdir -p .kube &&
	cat >.kube/config <<-\EOF
	apiVersion: v1
	kind: Config
	clusters:
	- name: dev
	  cluster:
	    server: https://127.0.0.1:6443
	    certificate-authority-data: Q0EgUEVN
	users:
	- name: dev-user
	  user:
	    token: tok-SECRET-1234
	    client-certificate-data: Q0VSVA==
	    client-key-data: S0VZLVNFQ1JFVA==
	contexts:
	- name: dev
	  context: {cluster: dev, user: dev-user, namespace: sandboxes}
	current-context: dev
	EOF
'

test_expect_success 'the resolved context, with file and line, secrets redacted' '
	KUBECONFIG="$PWD/.kube/config" kubeconfig-dump --auth >out &&
	grep "\"server\": \"https://127.0.0.1:6443\"" out &&
	grep "\"server-from\": \"$PWD/.kube/config:6\"" out &&
	grep "\"namespace\": \"sandboxes\"" out &&
	grep "\"token\": \"<redacted>\"" out &&
	grep "\"bearer-token\": \"<redacted>\"" out &&
	grep "\"client-key-data\": \"<redacted>\"" out &&
	! grep SECRET out &&
	! grep "S0VZLVNFQ1JFVA" out &&
	! grep "KEY-SECRET" out
'

test_expect_success '~/.kube/config is the default' '
	mkdir -p "$HOME/.kube" &&
	cp .kube/config "$HOME/.kube/config" &&
	kubeconfig-dump >out &&
	grep "\"sources\": \"$HOME/.kube/config\"" out
'

test_expect_success 'a typo names the file, the line and the field' '
	sed s/clusters:/clsuters:/ .kube/config >typo &&
	test_expect_code_err 1 kubeconfig-dump --kubeconfig=typo &&
	echo "error: cannot read kubeconfig '\''typo'\'': line 3: unknown field '\''clsuters'\''" >expect &&
	test_cmp expect err
'

test_expect_success 'an unknown context is an error' '
	test_expect_code_err 1 kubeconfig-dump --kubeconfig=.kube/config \
		--context=prod &&
	test_grep "context '\''prod'\'' not found" err
'

test_done
