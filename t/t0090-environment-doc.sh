#!/bin/sh
test_description='every environment variable gosbx reads is in gosbx(1) ENVIRONMENT

The names come from two places: the GOSBX_* names that "gosbx help"
(the global options) and "gosbx <command> -h" show, for every command "gosbx help" lists; and
the C sources of gosbx (gosbx.c, builtin/, lib/ of $GOSBX_SOURCE_DIR):
every "GOSBX_..." string literal (getenv calls, the OPT_*_ENV defaults
of option tables, wrappers such as env_int()) and every name given to
a getenv-like call ("getenv(", "getenv_any(", "kube_env_nonempty(",
...). Each must appear, as a word, in the ENVIRONMENT section of
Documentation/gosbx.txt.

Not checked: GOSBX_TEST_* (knobs of the test suite, e.g.
GOSBX_TEST_DL_DIR, documented where they are used), and
gosbx-runtime (runtime/), whose SANDBOX_* variables are in
gosbx-runtime(1).'
. "$(dirname "$0")/test-lib.sh"

SRC=$GOSBX_SOURCE_DIR

# the ENVIRONMENT section of gosbx.txt: up to the next section heading
# (a line of capitals underlined with dashes)
awk '
prev == "ENVIRONMENT" && /^-+$/ { inside = 1 }
inside && /^-+$/ && prev ~ /^[A-Z][A-Z ]+$/ && prev != "ENVIRONMENT" { exit }
inside { print prev }
{ prev = $0 }
' "$SRC/Documentation/gosbx.txt" >environment.txt

# documented NAME: NAME is a word of the ENVIRONMENT section
documented() {
	grep -qw -e "$1" environment.txt
}

test_expect_success 'the ENVIRONMENT section is found' '
	test "$(wc -l <environment.txt)" -gt 20 &&
	documented GOSBX_BACKEND &&
	! documented GOSBX_NO_SUCH_VARIABLE
'

test_expect_success 'the names that -h shows' '
	gosbx help >help &&
	# every command but help itself (it has no options; its text is
	# the global usage, usage.global)
	awk "/^commands:/ { c = 1; next }
		c && /^   [a-z]/ && \$1 != \"help\" { print \$1 }" \
		help >commands &&
	grep -x exec commands && grep -x mcp commands &&
	cp help usage.global &&
	while read -r cmd
	do
		gosbx "$cmd" -h >"usage.$cmd" || return 1
	done <commands &&
	cat usage.* | grep -o "GOSBX_[A-Z0-9_]*" >from-help &&
	grep -x GOSBX_BACKEND from-help && grep -x GOSBX_CLAIM from-help
'

test_expect_success 'the names the sources read' '
	find "$SRC/gosbx.c" "$SRC/builtin" "$SRC/lib" -name "*.[ch]" \
		>sources &&
	test -s sources &&
	xargs grep -ho "\"GOSBX_[A-Z0-9_]*\"" <sources >literals &&
	xargs grep -hoE "[a-z_]*env[a-z_]*\(\"[A-Z][A-Z0-9_]*\"" <sources |
		sed "s/.*(//" >calls &&
	cat literals calls | tr -d "\"" >from-sources &&
	grep -x GOSBX_HTTP_TRACE from-sources &&
	grep -x KUBECONFIG from-sources && grep -x XDG_STATE_HOME from-sources
'

sort -u from-help from-sources 2>/dev/null | grep -v "^GOSBX_TEST_" >names

while read -r name
do
	test_expect_success "$name is in gosbx(1) ENVIRONMENT" "
		documented $name
	"
done <names

test_done
