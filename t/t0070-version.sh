#!/bin/sh
test_description='gosbx version and gosbx --version

What gosbx is and runs with: the version, the libraries as built and
loaded (a missing dlopen()ed one is reported, not an error), bwrap, the
Go of local sandboxes and the backend defaults, as text or JSON.'
. "$(dirname "$0")"/test-lib.sh

test_expect_success 'text: the version, the libraries, bwrap, Go, defaults' '
	gosbx version >out &&
	grep "^gosbx version [0-9][0-9.]*" out &&
	grep "^compiler: " out &&
	grep "^   libcurl  *[0-9][0-9.]* (built against [0-9]" out &&
	grep "^   libarchive  *libarchive [0-9]" out &&
	grep "^bwrap: bubblewrap [0-9][0-9.]* (/" out &&
	grep "^go: go[0-9][0-9.]* (/.*/bin/go)$" out &&
	grep "^backend: local$" out &&
	grep "^   memory 2 GiB, cpus 2, pids 512, disk 2 GiB, idle ttl 1h$" out
'

test_expect_success '--version prints the same as version' '
	gosbx version >expect &&
	gosbx --version >actual &&
	test_cmp expect actual
'

test_expect_success 'json: one object with the documented keys' '
	gosbx version -o json >out.json &&
	gosbx version --json >out2.json &&
	test_cmp out.json out2.json &&
	python3 - out.json <<-\PY
	import json, sys
	v = json.load(open(sys.argv[1]))
	assert set(v) == {"version", "git", "compiler", "libraries", "bwrap",
			  "go", "backend"}, sorted(v)
	libs = {"libcurl", "jansson", "openssl", "libseccomp", "wslay",
		"libarchive", "libmicrohttpd", "readline"}
	assert set(v["libraries"]) == libs, sorted(v["libraries"])
	for name, lib in v["libraries"].items():
	    assert set(lib) == {"built", "loaded", "error"}, (name, lib)
	    assert lib["built"], name
	    assert lib["error"] is None, (name, lib)
	    assert name == "wslay" or lib["loaded"], name
	assert v["bwrap"]["version"].startswith("bubblewrap "), v["bwrap"]
	assert v["go"]["version"].startswith("go"), v["go"]
	assert v["go"]["path"].endswith("/bin/go"), v["go"]
	b = v["backend"]
	assert b == {"name": "local", "namespace": None, "template": None,
		     "memory_bytes": 2 << 30, "cpus": 2.0, "pids": 512,
		     "disk_bytes": 2 << 30, "ttl_ms": 3600000}, b
	PY
'

test_expect_success 'missing libraries and bwrap are reported, exit 0' '
	mkdir nolib &&
	env GOSBX_TEST_DL_DIR="$PWD/nolib" GOSBX_BWRAP=/nonexistent/bwrap \
		gosbx version >out 2>err &&
	test ! -s err &&
	grep "^   libarchive  *missing (built against [0-9.]*): libarchive\.so\.13 could not be loaded: .*; install libarchive13$" out &&
	grep "^   readline  *missing .*install libreadline8$" out &&
	grep "^bwrap: not found$" out &&
	env GOSBX_TEST_DL_DIR="$PWD/nolib" gosbx version --json >out.json &&
	python3 -c "
import json, sys
v = json.load(open(sys.argv[1]))
m = v[\"libraries\"][\"libmicrohttpd\"]
assert m[\"loaded\"] is None and \"libmicrohttpd12\" in m[\"error\"], m
" out.json
'

test_expect_success 'the kube backend: its namespace and template' '
	gosbx --backend=kube --namespace=t0070 version >out &&
	grep "^backend: kube$" out &&
	grep "^   namespace t0070, template go-runtime-template$" out &&
	! grep "^   memory" out
'

test_expect_success 'bad options are 129' '
	test_expect_code_err 129 gosbx version -o yaml &&
	test_grep "unknown output format .yaml. (expected text or json)" err &&
	test_expect_code_err 129 gosbx version --json -o text &&
	test_expect_code_err 129 gosbx version extra &&
	test_expect_code_err 129 gosbx version --bogus
'

test_done
