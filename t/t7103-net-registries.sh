#!/bin/sh
test_description='local network: pip and npm through the allow-list proxy

With their registry on --allow-net, `pip install` in a venv and
`npm install` work in a sandbox that has no other way out: both take
HTTPS_PROXY (Documentation/protocol/network.md). The registries are the ones pip and npm
are configured with here, read from their own configuration.'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY"/lib-backend.sh

# the sandbox's python3 and npm are the system's (its PATH)
/usr/bin/python3 -m pip --version >/dev/null 2>&1 ||
	test_skip_all 'python3-pip is not installed'
/usr/bin/python3 -c 'import ensurepip' 2>/dev/null ||
	test_skip_all 'python3-venv is not installed'

# the hosts of pip's index: its configured index-url, else pip's own
# default (PyPI and its file host)
pip_hosts=$(/usr/bin/python3 - <<\EOF
import subprocess, urllib.parse
from pip._internal.models.index import PyPI
url = subprocess.run(["/usr/bin/python3", "-m", "pip", "config", "get",
                      "global.index-url"], capture_output=True,
                     text=True).stdout.strip()
if url:
    print(urllib.parse.urlparse(url).hostname)
else:
    print(PyPI.netloc + "," + PyPI.file_storage_domain)
EOF
) || test_skip_all 'cannot read the index of pip'

test_expect_success 'pip install in a venv with its index on the list' '
	gosbx exec --allow-net="$pip_hosts" -- sh -c "
		python3 -m venv /tmp/v &&
		/tmp/v/bin/pip install -q --disable-pip-version-check six &&
		/tmp/v/bin/python -c \"import six; print(six.__name__)\"" >out &&
	echo six >expect &&
	test_cmp expect out
'

test_expect_success 'pip says which host it could not reach without the list' '
	test_expect_code_err 1 gosbx exec -- sh -c "
		python3 -m venv /tmp/v &&
		/tmp/v/bin/pip install --retries 1 --timeout 10 \
			--disable-pip-version-check six" &&
	test_grep "not on the sandbox.s allow-list; pass --allow-net=" err
'

if test -x /usr/bin/npm
then
	test_set_prereq NPM
	npm_registry=$(npm config get registry)
	npm_host=$(echo "$npm_registry" | sed -n "s|^https\{0,1\}://\([^/:]*\).*|\1|p")
fi

test_expect_success NPM 'npm install with its registry on the list' '
	test -n "$npm_host" &&
	gosbx exec --allow-net="$npm_host" \
		--env=NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt -- \
		sh -c "npm install --no-audit --no-fund --registry=$npm_registry is-number >/dev/null &&
		node -e \"console.log(require(\\\"is-number\\\")(5))\"" >out &&
	echo true >expect &&
	test_cmp expect out
'

test_done
