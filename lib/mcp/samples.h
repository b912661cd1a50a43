#ifndef SAMPLES_H
#define SAMPLES_H

#include "compat.h"

/*
 * The sample programs built into gosbx as C string tables: the Go
 * modules that `gosbx demo` ships into a sandbox (seed 001 "Path A":
 * the single-file smoke sample and the multi-file module
 * example.com/multifile) and the payloads of the four flows of
 * `gosbx smoke` (seed 000 "Smoke-test without an LLM").
 *
 * Every module says `go 1.19` in its go.mod and uses nothing newer, so
 * it builds with Debian's Go 1.19 and every later Go.
 */

/* One file of a sample: a path relative to /app and its contents. */
struct sample_file {
	const char *path; /* relative, '/' separated */
	const char *data; /* NUL-terminated text */
};

struct sample {
	const char *name;    /* e.g. "smoke", "multifile" */
	const char *summary; /* one line for people */
	const struct sample_file *files;
	size_t nr_files;
};

/*
 * The samples, by name:
 *   "smoke"       go.mod + main.go printing
 *                 "hello from the sandbox! sum(1..100)=5050,
 *                 go=<runtime.Version()>/<GOOS>/<GOARCH>" (seed 001)
 *   "multifile"   module example.com/multifile: main.go greeting Alice,
 *                 Bob and Carol through greet.Greet(name), which returns
 *                 "hello, <name> — from the multi-file sandbox sample",
 *                 and greet/greet_test.go (seed 001)
 *   "mcp-single"  go.mod + main.go printing "hello from mcp smoke"
 *   "mcp-multi"   go.mod, main.go and sub/sub.go printing
 *                 "hi from sub-package" (seed 000)
 *   "mcp-broken"  only main.go, "package main\nfunc main(){ broken }\n",
 *                 which fails to compile with
 *                 "./main.go:2:14: undefined: broken" (seed 000)
 * Returns a static sample, or NULL when there is none by that name.
 */
const struct sample *sample_find(const char *name);

/* The text of the sample's file at path, or NULL. Static. */
const char *sample_file_data(const struct sample *s, const char *path);

#endif /* SAMPLES_H */
