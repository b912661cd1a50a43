#!/bin/sh
# with-model.sh API SCRIPT LOG command...: start the scripted model
# (model-api.mjs beside this file, --api=API --script=SCRIPT --log=LOG) on
# 127.0.0.1, run the command with MODEL_URL=http://127.0.0.1:<port> in its
# environment, stop the model, exit with the command's status. With
# MCP_NETNS=1 (set by mcp_host_run in t/lib-mcp.sh when it runs this in a
# network namespace of its own) it first brings up loopback, the only
# interface there.
api=$1
script=$2
log=$3
shift 3
if test "${MCP_NETNS:-}" = 1; then
	ip link set lo up || exit 125
fi
dir=$(dirname "$0")
rm -f model.port
node "$dir/model-api.mjs" --api="$api" --script="$script" \
	--port-file=model.port --log="$log" 2>>model.err &
model=$!
i=0
while ! test -s model.port; do
	i=$((i + 1))
	if test $i -gt 300 || ! kill -0 $model 2>/dev/null; then
		echo >&2 "with-model.sh: the scripted model did not start"
		cat >&2 model.err
		kill $model 2>/dev/null
		exit 125
	fi
	sleep 0.1
done
MODEL_URL=http://127.0.0.1:$(cat model.port)
export MODEL_URL
"$@"
rc=$?
kill $model
wait $model
exit $rc
