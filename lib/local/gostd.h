#ifndef GOSTD_H
#define GOSTD_H

#include "compat.h"
#include "strbuf.h"

/*
 * The standard library's build cache, shared read-only by every local
 * sandbox of a Go (Documentation/protocol/network.md "Caches"; issue 18: the
 * first program that imports net/http in a new sandbox answers in about a
 * second instead of building std for several).
 *
 * One directory per Go release and GOROOT,
 * $XDG_CACHE_HOME/gosbx/gostd/<GOVERSION>-<GOOS>-<GOARCH>-<hash of the
 * GOROOT path>, a GOCACHE filled by a trusted step: `go build std` run
 * by gosbx on the host with the sandbox's build settings
 * (CGO_ENABLED=0, GOFLAGS=-buildvcs=false, GOENV=off), from the
 * GOROOT's own sources. No sandbox input goes into it and no sandbox
 * can write it: it is bound read-only at GOSTD_SANDBOX_DIR and lies
 * under the sandbox's own GOCACHE as the lower layer of an overlay
 * (isolate.h, isolate_config.gocache_lower), so what a sandbox builds
 * or changes lands in its own storage only.
 *
 * The first sandbox of a Go finds no layer: gostd_layer() starts the
 * build in the background (once: a lock) and that sandbox builds std
 * itself, as before; the ones that start after the build are fast.
 */

/*
 * $GOSBX_GOSTD_DIR: where the layers are instead of
 * $XDG_CACHE_HOME/gosbx/gostd (the test suite shares one among its
 * scripts), or "off": no layer.
 */

/* where the layer is in a sandbox */
#define GOSTD_SANDBOX_DIR "/opt/gosbx/go-build-std"

/*
 * The layer of the Go binary go (absolute path, or "go" on PATH): 1
 * with its directory in dir when it is built; 0 when it is not (yet):
 * the build was started in the background unless one is running, or
 * there is no go (nothing to do). Never fails the caller: problems are
 * logged by the build itself, into <dir>.log.
 */
int gostd_layer(const char *go, struct strbuf *dir);

/*
 * The same without starting a build (gosbx doctor): 1 with the layer's
 * directory in dir, 0 with the directory it will have (or nothing, when
 * there is no go or no cache directory).
 */
int gostd_layer_find(const char *go, struct strbuf *dir);

#endif
