#!/bin/sh
# t2030 (files gosbx writes: mtime of the write, UTF-8 names) with
# --backend=kube against fake-kube (t/lib-backend.sh).
GOSBX_TEST_BACKEND=kube
. "$(dirname "$0")"/t2030-files-mtime-utf8.sh
