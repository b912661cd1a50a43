#!/bin/sh
test_description='gosbx open -o json and gosbx claims -o json

open -o json prints one object saying what the sandbox got (the keys
and types of Documentation/gosbx-open.txt "JSON OUTPUT"); text output
is the bare claim name; --json is the same as -o json; another format
is a usage error (129) and opens nothing.'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY"/lib-backend.sh

test_have_prereq PYTHON || test_skip_all 'python3 is needed to read JSON'

test_atexit 'gosbx close --all'

# check_open FILE: one object with exactly the documented keys and types
cat >check-open.py <<\EOF
import json, sys
o = json.load(open(sys.argv[1], encoding="utf-8"))
num = (int, float)
types = {
    "claim": str, "backend": str, "ttl_s": num,
    "memory_bytes": (int, type(None)), "cpus": (*num, type(None)),
    "pids": (int, type(None)), "disk_bytes": (int, type(None)),
    "network": bool, "allow_net": list, "modules": (bool, type(None)),
    "go": (str, type(None)), "go_version": (str, type(None)),
}
assert sorted(o) == sorted(types), sorted(o)
for k, t in types.items():
    assert isinstance(o[k], t), (k, o[k])
    assert not isinstance(o[k], bool) or bool in (t if isinstance(t, tuple) else (t,)), (k, o[k])
assert all(isinstance(h, str) for h in o["allow_net"]), o
EOF

test_expect_success 'text output is the claim name alone' '
	name=$(gosbx open 2>err) &&
	test "$(echo "$name" | wc -l)" = 1 &&
	backend_claim_exists "$name" &&
	grep "use it with: gosbx exec --claim=$name" err &&
	gosbx close "$name"
'

test_expect_success 'open -o json: the claim, the backend and what it got' '
	gosbx open -o json --name=j1 --ttl=90s \
		--allow-net=a.example.org,b.example.org:8443 --modules=off \
		>j1.json 2>err &&
	test_drop_limits_warning err &&
	test ! -s err &&
	python3 check-open.py j1.json &&
	python3 - j1.json <<-\EOF &&
	import json, sys
	o = json.load(open(sys.argv[1]))
	assert o["claim"] == "j1" and o["backend"] == "local", o
	assert o["ttl_s"] == 90, o
	assert o["allow_net"] == ["a.example.org", "b.example.org:8443"], o
	assert o["network"] is False and o["modules"] is False, o
	assert o["go"] is None, o
	EOF
	gosbx exec --claim=j1 -- true
'

test_expect_success LIMITS 'open -o json: the limits applied' '
	gosbx open -o json --name=j2 --memory=300m --cpus=1.5 --pids=100 \
		>j2.json &&
	python3 check-open.py j2.json &&
	python3 - j2.json <<-\EOF
	import json, sys
	o = json.load(open(sys.argv[1]))
	assert o["memory_bytes"] == 300 << 20, o
	assert o["cpus"] == 1.5 and o["pids"] == 100, o
	assert o["modules"] is True and o["allow_net"] == [], o
	assert o["ttl_s"] == 3600, o
	EOF
'

test_expect_success NOLIMITS 'open -o json: a default limit this host cannot apply is 0' '
	gosbx open -o json --name=j2 >j2.json 2>err &&
	grep "runs without some default limits" err &&
	python3 check-open.py j2.json &&
	python3 -c "import json
o = json.load(open(\"j2.json\"))
assert 0 in (o[\"memory_bytes\"], o[\"pids\"], o[\"cpus\"]), o"
'

test_expect_success 'go_version is the release of the Go in the sandbox' '
	if test -f "$(go env GOROOT 2>/dev/null)/VERSION"
	then
		gosbx exec --claim=j1 -- go env GOVERSION >want
	else
		echo None >want
	fi &&
	python3 -c "import json
v = json.load(open(\"j1.json\"))[\"go_version\"]
print(v if v else None)" >got &&
	test_cmp want got
'

test_expect_success '--json is the same as -o json' '
	gosbx open --json --name=j3 --ttl=90s \
		--allow-net=a.example.org,b.example.org:8443 --modules=off \
		>j3.json &&
	python3 -c "import json
a, b = (json.load(open(f)) for f in (\"j1.json\", \"j3.json\"))
a.pop(\"claim\"), b.pop(\"claim\")
assert a == b, (a, b)"
'

test_expect_success 'another format is a usage error and opens nothing' '
	backend_claims >before &&
	test_expect_code_err 129 gosbx open -o yaml --name=j4 &&
	grep "unknown output format .yaml. (expected text or json)" err &&
	test_expect_code_err 129 gosbx open -o text --json --name=j4 &&
	grep "json and -o text do not go together" err &&
	backend_claims >after &&
	test_cmp before after
'

test_expect_success 'claims: --json is -o json; -o yaml is 129' '
	gosbx claims -o json >a.json &&
	gosbx claims --json >b.json &&
	python3 -c "import json
a, b = (json.load(open(f)) for f in (\"a.json\", \"b.json\"))
names = sorted(c[\"name\"] for c in a)
assert names == [\"j1\", \"j2\", \"j3\"], names
for x in a + b:
    x.pop(\"age_s\"); x.pop(\"idle_s\"); x.pop(\"last_used\")
assert a == b, (a, b)" &&
	test_expect_code_err 129 gosbx claims -o yaml &&
	grep "unknown output format .yaml. (expected table or json)" err
'

test_done
