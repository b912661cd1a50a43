/*
 * The sample Go programs of `gosbx demo` and `gosbx smoke`, built into
 * the binary (lib/mcp/samples.h). Written for gosbx after the flows of
 * seeds 000 and 001; every module targets `go 1.19`.
 */
#include "compat.h"
#include "mcp/samples.h"

/* seed 001: the single-file smoke flow */
static const struct sample_file smoke_files[] = {
	{ "go.mod", "module example.com/smoke\n"
		    "\n"
		    "go 1.19\n" },
	{ "main.go",
	  "// The single-file sample of gosbx demo: some arithmetic and the\n"
	  "// toolchain that built it, to show the code really ran inside.\n"
	  "package main\n"
	  "\n"
	  "import (\n"
	  "\t\"fmt\"\n"
	  "\t\"runtime\"\n"
	  ")\n"
	  "\n"
	  "func sumTo(n int) int {\n"
	  "\ttotal := 0\n"
	  "\tfor i := 1; i <= n; i++ {\n"
	  "\t\ttotal += i\n"
	  "\t}\n"
	  "\treturn total\n"
	  "}\n"
	  "\n"
	  "func main() {\n"
	  "\tfmt.Printf(\"hello from the sandbox! sum(1..100)=%d, "
	  "go=%s/%s/%s\\n\",\n"
	  "\t\tsumTo(100), runtime.Version(), runtime.GOOS, "
	  "runtime.GOARCH)\n"
	  "}\n" },
};

/* seed 001: the multi-file module flow */
static const struct sample_file multifile_files[] = {
	{ "go.mod", "module example.com/multifile\n"
		    "\n"
		    "go 1.19\n" },
	{ "main.go",
	  "// The multi-file sample of gosbx demo: a main package that uses\n"
	  "// a package of the same module.\n"
	  "package main\n"
	  "\n"
	  "import (\n"
	  "\t\"fmt\"\n"
	  "\n"
	  "\t\"example.com/multifile/greet\"\n"
	  ")\n"
	  "\n"
	  "func main() {\n"
	  "\tfor _, name := range []string{\"Alice\", \"Bob\", \"Carol\"} {\n"
	  "\t\tfmt.Println(greet.Greet(name))\n"
	  "\t}\n"
	  "}\n" },
	{ "greet/greet.go",
	  "// Package greet builds the greetings of the multi-file sample.\n"
	  "package greet\n"
	  "\n"
	  "// Greet returns the greeting for name.\n"
	  "func Greet(name string) string {\n"
	  "\treturn \"hello, \" + name + \" \xe2\x80\x94 from the multi-file "
	  "sandbox sample\"\n"
	  "}\n" },
	{ "greet/greet_test.go",
	  "package greet\n"
	  "\n"
	  "import (\n"
	  "\t\"strings\"\n"
	  "\t\"testing\"\n"
	  ")\n"
	  "\n"
	  "func TestGreet(t *testing.T) {\n"
	  "\tfor _, name := range []string{\"Alice\", \"Bob\", \"\"} {\n"
	  "\t\tgot := Greet(name)\n"
	  "\t\tif !strings.HasPrefix(got, \"hello, \"+name+\" \") {\n"
	  "\t\t\tt.Errorf(\"Greet(%q) = %q, want the name after "
	  "\\\"hello, \\\"\", name, got)\n"
	  "\t\t}\n"
	  "\t\tif !strings.HasSuffix(got, \"from the multi-file sandbox "
	  "sample\") {\n"
	  "\t\t\tt.Errorf(\"Greet(%q) = %q, want the sample's "
	  "signature\", name, got)\n"
	  "\t\t}\n"
	  "\t}\n"
	  "}\n" },
};

/* seed 000, smoke flows 1 and 2: single-file go run, build + re-run */
static const struct sample_file mcp_single_files[] = {
	{ "go.mod", "module example.com/m\n"
		    "\n"
		    "go 1.19\n" },
	{ "main.go",
	  "package main\n"
	  "\n"
	  "import \"fmt\"\n"
	  "\n"
	  "func main() { fmt.Println(\"hello from mcp smoke\") }\n" },
};

/* seed 000, smoke flow 3: a module with a sub-package */
static const struct sample_file mcp_multi_files[] = {
	{ "go.mod", "module example.com/multi\n"
		    "\n"
		    "go 1.19\n" },
	{ "main.go", "package main\n"
		     "\n"
		     "import (\n"
		     "\t\"fmt\"\n"
		     "\n"
		     "\t\"example.com/multi/sub\"\n"
		     ")\n"
		     "\n"
		     "func main() { fmt.Println(sub.Msg()) }\n" },
	{ "sub/sub.go",
	  "package sub\n"
	  "\n"
	  "// Msg says where it comes from.\n"
	  "func Msg() string { return \"hi from sub-package\" }\n" },
};

/*
 * seed 000, smoke flow 4: does not compile. Kept on two lines, as in
 * the seed, so the error is "./main.go:2:14: undefined: broken".
 */
static const struct sample_file mcp_broken_files[] = {
	{ "main.go", "package main\n"
		     "func main(){ broken }\n" },
};

#define SAMPLE(n, s, f)                                                        \
	{                                                                      \
		(n), (s), (f), ARRAY_SIZE(f)                                   \
	}

static const struct sample samples[] = {
	SAMPLE("smoke", "single-file program: go run, go build, ./app",
	       smoke_files),
	SAMPLE("multifile", "module with a package and a test",
	       multifile_files),
	SAMPLE("mcp-single", "gosbx smoke: single-file go run",
	       mcp_single_files),
	SAMPLE("mcp-multi", "gosbx smoke: multi-file build+run",
	       mcp_multi_files),
	SAMPLE("mcp-broken", "gosbx smoke: intentional compile error",
	       mcp_broken_files),
};

const struct sample *sample_find(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(samples); i++)
		if (!strcmp(samples[i].name, name))
			return &samples[i];
	return NULL;
}

const char *sample_file_data(const struct sample *s, const char *path)
{
	for (size_t i = 0; i < s->nr_files; i++)
		if (!strcmp(s->files[i].path, path))
			return s->files[i].data;
	return NULL;
}
