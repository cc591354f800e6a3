#!/usr/bin/env bash
# `make demo`: serve a directory namespace over the Lance REST protocol, run the
# PySpark pipeline example through that server, list what it wrote, stop the server.
#   DEMO_ROWS=1000000 make demo     more data
#   DEMO_DIR=/tmp/x make demo       where the lake and the server log go (default .lance-ns-demo)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
DEMO_DIR=${DEMO_DIR:-$PWD/.lance-ns-demo}
ROOT=$DEMO_DIR/lake
rm -rf "$ROOT"   # the demo's own lake: each run starts empty
mkdir -p "$ROOT"
PORT=$($BIN/python -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
URI=http://127.0.0.1:$PORT

echo "== starting lance-ns serve (dir namespace at $ROOT) on $URI"
$BIN/lance-ns serve --impl dir --prop "root=$ROOT" --host 127.0.0.1 --port "$PORT" \
    >"$DEMO_DIR/server.log" 2>&1 &
SERVER_PID=$!
trap 'kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null || true' EXIT

$BIN/python - "$URI" <<'PY'
import sys, time, urllib.request
url = sys.argv[1] + "/health"
for _ in range(240):
    try:
        urllib.request.urlopen(url, timeout=1).read()
        sys.exit(0)
    except OSError:
        time.sleep(0.5)
sys.exit("the REST server did not become healthy; see the server log")
PY

echo "== running the PySpark pipeline (SQL on the catalog lake) through the REST server"
$BIN/python examples/pipeline.py --rest-uri "$URI" --rows "${DEMO_ROWS:-200000}"

echo "== tables in the namespace, as the CLI sees them through the server"
$BIN/lance-ns table list analytics --impl rest --prop "uri=$URI"
echo "== done; the lake is in $ROOT"
