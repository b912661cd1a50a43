#!/bin/sh
test_description='the runtime image, run by podman

GOSBX_TEST_IMAGE names the image to test (make image builds
localhost/gosbx-runtime:debian from Debian packages; .ci/run builds
and tests it). The container runs as Kubernetes would run it (runc,
its own network through slirp4netns, port 8888 published on
127.0.0.1): the runtime answers the upstream contract on all
interfaces, the seed'"'"'s Go samples run (gosbx demo: go run, go build,
go test), commands run as uid 1000 in /app with the Go release the
image was built with and its pre-warmed build cache, and no Kubernetes
credentials are in it.

Without GOSBX_TEST_IMAGE the script is skipped, unless
GOSBX_TEST_IMAGE_REQUIRED=1 (CI), which makes that a failure.'
. "$(dirname "$0")"/test-lib.sh
. "$TEST_DIRECTORY"/lib-runtime.sh

IMAGE=${GOSBX_TEST_IMAGE:-}
if test -z "$IMAGE"; then
	if test -n "${GOSBX_TEST_IMAGE_REQUIRED:-}"; then
		test_expect_success 'GOSBX_TEST_IMAGE names the image to test' '
			echo >&4 "GOSBX_TEST_IMAGE is not set (make image)" &&
			false
		'
		test_done
	fi
	test_skip_all 'no runtime image: make image, then GOSBX_TEST_IMAGE=localhost/gosbx-runtime:debian'
fi

# py_json <file> <expr>: a Python expression of the JSON v, as JSON
py_json() {
	python3 -c "import json, sys; v = json.load(open(sys.argv[1])); print(json.dumps(eval(sys.argv[2])))" "$1" "$2"
}

container_gone() {
	! podman container exists "$1"
}

rt_exec() {
	curl -sS -X POST -H "Content-Type: application/json" \
		--data "$(python3 -c 'import json, sys; print(json.dumps({"command": sys.argv[1]}))' "$1")" \
		"$URL/execute" >exec.json &&
	json_get exec.json stdout
}

LABEL="gosbx.test=$TRASH_DIRECTORY"
remove_containers() {
	# shellcheck disable=SC2046
	set -- $(podman ps -aq --filter "label=$LABEL" 2>/dev/null)
	test $# = 0 || podman rm -f -t 0 "$@" >/dev/null 2>&1
}
test_atexit remove_containers

test_expect_success 'podman is installed and the image exists' '
	command -v podman &&
	podman image exists "$IMAGE"
'

test_expect_success 'the image: user 1000, workdir /app, port 8888, the runtime' '
	podman image inspect --format "{{.Config.User}}|{{.Config.WorkingDir}}|{{.Config.Entrypoint}}" \
		"$IMAGE" >config &&
	echo "1000:1000|/app|[/usr/local/bin/gosbx-runtime]" >expect &&
	test_cmp expect config &&
	podman image inspect --format "{{range .Config.Env}}{{println .}}{{end}}" \
		"$IMAGE" >env &&
	for v in SANDBOX_ADDR=:8888 SANDBOX_WORKDIR=/app HOME=/home/sandbox \
		"SANDBOX_ALLOW_HOSTS=*.svc,*.svc.cluster.local" \
		GOCACHE=/home/sandbox/.cache/go-build GOTOOLCHAIN=local \
		CGO_ENABLED=0 GOFLAGS=-buildvcs=false \
		SANDBOXD_REST_ADDR=127.0.0.1:8080 \
		SANDBOXD_GRPC_ADDR=127.0.0.1:9090; do
		grep -qxF "$v" env || {
			echo >&4 "missing ENV $v" && return 1
		}
	done
'

# a container as the kubelet would start it: no arguments (the image's
# ENTRYPOINT and ENV choose the address), its own network namespace
test_expect_success 'the container starts and listens on all interfaces' '
	podman run -d --rm --runtime runc --network=slirp4netns \
		--ulimit nofile=8192:8192 --ulimit nproc=4096:4096 \
		--label "$LABEL" -p 127.0.0.1::8888 "$IMAGE" >cid &&
	podman port "$(cat cid)" 8888/tcp >port &&
	sed -n "s|^127.0.0.1:\([0-9]*\)$|http://127.0.0.1:\1|p" port >rt.url &&
	test -s rt.url &&
	rt_poll 60 curl -sf -o /dev/null "$(cat rt.url)/" &&
	podman logs "$(cat cid)" >log 2>&1 &&
	test_grep "msg=\"server listening\" addr=:8888 workdir=/app" log
'

URL=
test -s rt.url && URL=$(cat rt.url)

test_expect_success 'GET / answers the readiness probe' '
	curl -sS "$URL/" >out &&
	json_is out status ok &&
	json_is out server gosbx-runtime
'

test_expect_success 'the upstream contract: execute, upload, list, exists, download' '
	curl -sS -X POST -H "Content-Type: application/json" \
		--data "{\"command\":\"echo hi; echo err >&2; exit 3\"}" \
		"$URL/execute" >out &&
	test "$(py_json out "v[\"exit_code\"], v[\"stdout\"], v[\"stderr\"]")" = \
		"[3, \"hi\\n\", \"err\\n\"]" &&
	printf "payload" >f.txt &&
	curl -sS -F "file=@f.txt" "$URL/upload" >out &&
	json_is out filename f.txt &&
	json_is out size 7 &&
	curl -sS "$URL/list/" >out &&
	test_grep "\"name\":\"f.txt\"" out &&
	curl -sS "$URL/exists/f.txt" >out &&
	json_is out exists true &&
	curl -sS "$URL/download/f.txt" >got &&
	test_cmp f.txt got &&
	curl -sS -o out -w "%{http_code}" "$URL/download/..%2Fetc%2Fpasswd" >code &&
	test "$(cat code)" = 403
'

# KEP-539.2: sandboxd beside the runtime, on loopback, found by code
# in the sandbox through SANDBOXD_*_ADDR
test_expect_success 'sandboxd listens on loopback, where its SDKs look' '
	podman logs "$(cat cid)" >log 2>&1 &&
	test_grep "msg=\"sandboxd listening\" addr=127.0.0.1:8080" log &&
	test_grep "msg=\"sandboxd grpc listening\" addr=127.0.0.1:9090" log &&
	cat >probe.py <<-\EOF &&
	import os, socket, urllib.request
	rest = os.environ["SANDBOXD_REST_ADDR"]
	grpc = os.environ["SANDBOXD_GRPC_ADDR"]
	with urllib.request.urlopen("http://%s/v1/health" % rest) as r:
	    print(r.status, rest, grpc)
	host, port = grpc.rsplit(":", 1)
	socket.create_connection((host, int(port)), 5).close()
	EOF
	curl -sS -F "file=@probe.py" "$URL/upload" >up &&
	json_is up filename probe.py &&
	rt_exec "python3 probe.py" >out &&
	echo "200 127.0.0.1:8080 127.0.0.1:9090" >expect &&
	test_cmp expect out
'

test_expect_success 'commands run as uid 1000 in /app' '
	rt_exec "id -u; id -g; pwd" >out &&
	printf "1000\n1000\n/app\n" >expect &&
	test_cmp expect out
'

# The label io.gosbx.go-version says which Go the image was built with
# (build-debian.sh --go, or its default; the Dockerfile's GO_VERSION):
# a release x.y.z is the toolchain module in /usr/local/go
# (runtime-image/go-toolchain.sh), 1.23 or 1.19 Debian's package. The go
# of every command is that one, and GOTOOLCHAIN=local keeps a go.mod
# from switching to another.
test_expect_success 'the go of the image is the release it was built with' '
	go=$(podman image inspect --format "{{index .Config.Labels \"io.gosbx.go-version\"}}" "$IMAGE") &&
	case "$go" in
	[1-9]*.*.*) goroot=/usr/local/go want=go$go ;;
	1.19 | 1.23) goroot=/usr/lib/go-$go want="go$go.[0-9]*" ;;
	*) echo >&4 "label io.gosbx.go-version: \"$go\"" && false ;;
	esac &&
	rt_exec "command -v go; go env GOROOT GOTOOLCHAIN" >out &&
	printf "%s\n" "$goroot/bin/go" "$goroot" local >expect &&
	test_cmp expect out &&
	rt_exec "head -n 1 $goroot/VERSION; go env GOVERSION; go version" >out &&
	v=$(sed -n 1p out) &&
	case "$v" in
	$want) ;;
	*) echo >&4 "$goroot/VERSION says $v, the label $go" && false ;;
	esac &&
	printf "%s\n%s\ngo version %s\n" "$v" "$v" "$v" >expect &&
	sed "3s| linux/[a-z0-9]*\$||" out >got &&
	test_cmp expect got
'

# one pin for both ways of building the image
test_expect_success 'the Dockerfile carries the Go release make image pins' '
	sed -n "s/^ARG GO_VERSION=//p" \
		"$GOSBX_SOURCE_DIR/runtime-image/Dockerfile" >docker &&
	sed -n "s/^DEFAULT_GO=//p" \
		"$GOSBX_SOURCE_DIR/runtime-image/go-toolchain.sh" >debian &&
	test_line_count = 1 debian &&
	test_cmp debian docker
'

test_expect_success 'the build cache is warm: go build std has nothing left to do' '
	rt_exec "du -s \$GOCACHE | cut -f1; go build -x std 2>&1 | grep -c \"^compile \" || true" >out &&
	test "$(sed -n 1p out)" -gt 10000 &&
	test "$(sed -n 2p out)" = 0
'

test_expect_success 'no Kubernetes credentials or environment inside' '
	rt_exec "ls /var/run/secrets/kubernetes.io 2>&1; env | grep -c ^KUBERNETES_ || true" >out &&
	test_grep "No such file or directory" out &&
	test "$(tail -n 1 out)" = 0
'

test_expect_success 'the seed'"'"'s samples: go run, go build, go test (gosbx demo)' '
	gosbx --backend=url --url="$URL" demo --flow=all >out 2>err &&
	test_grep "^-- go run main.go \[exit=0\] -- hello from the sandbox! sum(1..100)=5050, go=go" out &&
	test_grep "^-- go test ./... \[exit=0\] -- " out &&
	test_grep "^ok[[:space:]]*example.com/multifile/greet" out
'

test_expect_success 'SIGTERM stops the container' '
	podman stop -t 10 "$(cat cid)" >/dev/null &&
	# --rm: removed once podman has cleaned up after the exit
	rt_poll 30 container_gone "$(cat cid)"
'

test_done
