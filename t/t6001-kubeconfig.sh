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

# kubectl (client-go) ignores fields it does not know; so does gosbx,
# and it names the file, the line and the field in a warning.
test_expect_success 'an unknown field is ignored as kubectl does, with a warning' '
	sed s/clusters:/clsuters:/ .kube/config >typo &&
	kubectl --kubeconfig=typo config view >kubectl.out &&
	test_expect_code_err 1 kubeconfig-dump --kubeconfig=typo &&
	test_grep "^warning: kubeconfig .typo.: line 3: unknown field .clsuters. ignored$" err &&
	test_grep "context .dev. names cluster .dev., which is not defined" err &&
	sed "s/^    server:/    newfield: 1\n    server:/" .kube/config >extra &&
	kubectl --kubeconfig=extra config view >kubectl.out &&
	kubeconfig-dump --kubeconfig=extra >out 2>err &&
	test_grep "unknown field .newfield." err &&
	grep "\"server\": \"https://127.0.0.1:6443\"" out
'

test_expect_success 'as, as-groups, as-uid and as-user-extra are sent as Impersonate-*' '
	cat >imp <<-\EOF &&
	apiVersion: v1
	kind: Config
	clusters:
	- name: dev
	  cluster: {server: "https://127.0.0.1:6443"}
	users:
	- name: u
	  user:
	    token: t
	    as: alice
	    as-groups: [devs]
	    as-uid: "1234"
	    as-user-extra: {team: [a, b], "acme.io/scope": [x]}
	contexts:
	- name: dev
	  context: {cluster: dev, user: u}
	current-context: dev
	EOF
	kubeconfig-dump --kubeconfig=imp --auth >out &&
	python3 -c "
import json
a = json.load(open(\"out\"))[\"auth\"][\"impersonation\"]
assert a == [\"Impersonate-User: alice\", \"Impersonate-Group: devs\",
             \"Impersonate-Uid: 1234\", \"Impersonate-Extra-team: a\",
             \"Impersonate-Extra-team: b\",
             \"Impersonate-Extra-acme.io%2Fscope: x\"], a
"
'

test_expect_success 'as-uid without as is refused, as kubectl refuses it' '
	sed "/    as: alice/d" imp >noas &&
	! kubectl --kubeconfig=noas get --raw /version 2>kerr &&
	test_grep "requesting uid, groups or user-extra for u without impersonating a user" kerr &&
	test_expect_code_err 1 kubeconfig-dump --kubeconfig=noas --auth &&
	test_grep "requesting uid, groups or user-extra for u without impersonating a user" err
'

test_expect_success 'an unknown context is an error' '
	test_expect_code_err 1 kubeconfig-dump --kubeconfig=.kube/config \
		--context=prod &&
	test_grep "context '\''prod'\'' not found" err
'

test_done
