// sandboxd-conformance: the sandboxd Core contract (KEP-539.2,
// agent-sandbox v1.0.3: packages/sandboxd/spec/filesystem/v1/filesystem.yaml,
// spec/process/v1/process.proto, USER_GUIDE.md) checked against a server
// given by its addresses, so that one suite runs against upstream sandboxd
// and gosbx-runtime alike (t3114), and the benchmarks of t/perf/run.sh.
// Usage:
//
//	sandboxd-conformance list
//	sandboxd-conformance run <rest url> <grpc addr> <root dir> <case>...
//	sandboxd-conformance bench-exec <grpc addr> <calls>
//	sandboxd-conformance bench-stream <grpc addr> <bytes>
//
// run checks each case and prints "ok <case>" or "not ok <case>: <why>";
// it exits 1 when one failed. <root dir> is the server's root (upstream
// --root-dir, gosbx-runtime --workdir), read directly to check what a
// request did on disk. The server must have SANDBOX_CONFORMANCE=yes and
// CONFORMANCE_HIDDEN=no in its environment (the metadata case).
//
// bench-exec runs Execute of `true` <calls> times after 10 unmeasured
// ones and prints "p50_us <n>", "p99_us <n>", "mean_us <n>";
// bench-stream runs Start of `head -c <bytes> /dev/zero`, counts the
// stdout bytes and prints "bytes <n>", "seconds <s>", "mb_per_s <r>"
// (MB = 10^6 bytes).
//
// The client is upstream's generated one; gRPC's default limit on an
// answer (4 MiB) applies.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
	processv1 "sigs.k8s.io/agent-sandbox/packages/sandboxd/spec/process/v1"
)

type env struct {
	rest string
	addr string // the gRPC listener, for the cases that speak HTTP/2 themselves
	root string
	pc   processv1.ProcessServiceClient
	ctx  context.Context
}

type testCase struct {
	name string
	fn   func(*env) error
}

var cases = []testCase{
	{"health", caseHealth},
	{"metadata", caseMetadata},
	{"files-put-get", caseFilesPutGet},
	{"files-put-overwrite-atomic", caseFilesOverwrite},
	{"files-put-mode", caseFilesMode},
	{"files-put-bad-mode", caseFilesBadMode},
	{"files-put-multipart", caseFilesMultipart},
	{"files-head", caseFilesHead},
	{"files-get-missing", caseFilesMissing},
	{"files-listing", caseFilesListing},
	{"files-delete", caseFilesDelete},
	{"files-delete-non-empty", caseFilesDeleteNonEmpty},
	{"files-escape-dotdot", caseFilesEscapeDotdot},
	{"files-escape-symlink", caseFilesEscapeSymlink},
	{"execute", caseExecute},
	{"execute-argv", caseExecuteArgv},
	{"execute-env", caseExecuteEnv},
	{"execute-cwd", caseExecuteCwd},
	{"execute-errors", caseExecuteErrors},
	{"start", caseStart},
	{"start-stdin-eof", caseStartStdin},
	{"start-signal", caseStartSignal},
	{"start-pty-resize", caseStartPty},
	{"process-not-found", caseNotFound},
	{"signal-invalid", caseSignalInvalid},
	{"start-errors", caseStartErrors},
	{"exec-no-shell", caseExecNoShell},
	{"compressed-request", caseCompressed},
	{"grpc-timeout-malformed", caseTimeoutMalformed},
	{"execute-deadline", caseExecuteDeadline},
	{"start-deadline", caseStartDeadline},
}

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	switch os.Args[1] {
	case "list":
		for _, c := range cases {
			fmt.Println(c.name)
		}
	case "run":
		if len(os.Args) < 5 {
			usage()
		}
		os.Exit(run(os.Args[2], os.Args[3], os.Args[4], os.Args[5:]))
	case "bench-exec":
		if len(os.Args) != 4 {
			usage()
		}
		n, err := strconv.Atoi(os.Args[3])
		check(err)
		check(benchExec(dial(os.Args[2]), n))
	case "bench-stream":
		if len(os.Args) != 4 {
			usage()
		}
		n, err := strconv.ParseInt(os.Args[3], 10, 64)
		check(err)
		check(benchStream(dial(os.Args[2]), n))
	default:
		usage()
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: sandboxd-conformance list | run <rest url> <grpc addr> <root> <case>... | bench-exec <grpc addr> <calls> | bench-stream <grpc addr> <bytes>")
	os.Exit(129)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "sandboxd-conformance:", err)
		os.Exit(1)
	}
}

func dial(addr string) processv1.ProcessServiceClient {
	conn, err := grpc.NewClient(addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	check(err)
	return processv1.NewProcessServiceClient(conn)
}

func run(rest, grpcAddr, root string, names []string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	e := &env{rest: strings.TrimRight(rest, "/"), addr: grpcAddr, root: root,
		pc: dial(grpcAddr), ctx: ctx}
	byName := map[string]testCase{}
	for _, c := range cases {
		byName[c.name] = c
	}
	if len(names) == 0 {
		for _, c := range cases {
			names = append(names, c.name)
		}
	}
	ret := 0
	for _, n := range names {
		c, ok := byName[n]
		if !ok {
			fmt.Printf("not ok %s: no such case\n", n)
			ret = 1
			continue
		}
		if err := c.fn(e); err != nil {
			fmt.Printf("not ok %s: %v\n", n, err)
			ret = 1
		} else {
			fmt.Printf("ok %s\n", n)
		}
	}
	return ret
}

/* REST */

type answer struct {
	code   int
	header http.Header
	body   []byte
}

func (e *env) req(method, path string, body io.Reader, ctype string) (*answer, error) {
	r, err := http.NewRequestWithContext(e.ctx, method, e.rest+path, body)
	if err != nil {
		return nil, err
	}
	if ctype != "" {
		r.Header.Set("Content-Type", ctype)
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return &answer{resp.StatusCode, resp.Header, b}, nil
}

// expect: the status, else an error naming the answer
func (a *answer) expect(code int) error {
	if a.code != code {
		return fmt.Errorf("status %d, want %d; body %.300q", a.code,
			code, a.body)
	}
	return nil
}

// expectError: the status and the Error schema {code, message} with this
// code (filesystem.yaml, components/schemas/Error)
func (a *answer) expectError(code int, errCode string) error {
	if err := a.expect(code); err != nil {
		return err
	}
	var v struct {
		Code    *string `json:"code"`
		Message *string `json:"message"`
	}
	if err := json.Unmarshal(a.body, &v); err != nil {
		return fmt.Errorf("error body %.300q: %v", a.body, err)
	}
	if v.Code == nil || v.Message == nil || *v.Message == "" {
		return fmt.Errorf("error body %.300q: want code and message", a.body)
	}
	if *v.Code != errCode {
		return fmt.Errorf("error code %q, want %q", *v.Code, errCode)
	}
	return nil
}

func (e *env) put(path string, data []byte, query string) (*answer, error) {
	return e.req("PUT", "/v1/files/"+path+query, bytes.NewReader(data),
		"application/octet-stream")
}

// clean: an empty directory for a case, under the root
func (e *env) clean(dir string) error {
	p := filepath.Join(e.root, dir)
	if err := os.RemoveAll(p); err != nil {
		return err
	}
	return os.MkdirAll(p, 0o755)
}

func caseHealth(e *env) error {
	a, err := e.req("GET", "/v1/health", nil, "")
	if err != nil {
		return err
	}
	if err := a.expect(200); err != nil {
		return err
	}
	if !strings.HasPrefix(a.header.Get("Content-Type"), "application/json") {
		return fmt.Errorf("content type %q", a.header.Get("Content-Type"))
	}
	var v map[string]any
	if err := json.Unmarshal(a.body, &v); err != nil {
		return err
	}
	if v["status"] != "ok" {
		return fmt.Errorf("status field %v", v["status"])
	}
	if u, ok := v["uptime_seconds"]; ok {
		if f, isNum := u.(float64); !isNum || f < 0 || f != float64(int64(f)) {
			return fmt.Errorf("uptime_seconds %v is not an integer", u)
		}
	}
	return nil
}

func caseMetadata(e *env) error {
	a, err := e.req("GET", "/v1/metadata", nil, "")
	if err != nil {
		return err
	}
	if err := a.expect(200); err != nil {
		return err
	}
	var v struct {
		Env map[string]string `json:"env"`
	}
	if err := json.Unmarshal(a.body, &v); err != nil {
		return err
	}
	if v.Env["SANDBOX_CONFORMANCE"] != "yes" {
		return fmt.Errorf("env lacks SANDBOX_CONFORMANCE=yes: %s", a.body)
	}
	for k := range v.Env {
		if !strings.HasPrefix(k, "SANDBOX_") {
			return fmt.Errorf("env serves %s, outside the prefix", k)
		}
	}
	return nil
}

func caseFilesPutGet(e *env) error {
	if err := e.clean("pg"); err != nil {
		return err
	}
	data := []byte("hello\x00world\n\xff")
	a, err := e.put("pg/a/b/c.bin", data, "")
	if err != nil {
		return err
	}
	if err := a.expect(204); err != nil {
		return err
	}
	disk, err := os.ReadFile(filepath.Join(e.root, "pg/a/b/c.bin"))
	if err != nil || !bytes.Equal(disk, data) {
		return fmt.Errorf("on disk %q (%v), want %q", disk, err, data)
	}
	a, err = e.req("GET", "/v1/files/pg/a/b/c.bin", nil, "")
	if err != nil {
		return err
	}
	if err := a.expect(200); err != nil {
		return err
	}
	if ct := a.header.Get("Content-Type"); ct != "application/octet-stream" {
		return fmt.Errorf("content type %q", ct)
	}
	if !bytes.Equal(a.body, data) {
		return fmt.Errorf("GET %q, want %q", a.body, data)
	}
	// the path URL-encoded (%2F), as the spec asks of clients
	a, err = e.req("GET", "/v1/files/pg%2Fa%2Fb%2Fc.bin", nil, "")
	if err != nil {
		return err
	}
	if err := a.expect(200); err != nil {
		return fmt.Errorf("encoded path: %v", err)
	}
	if !bytes.Equal(a.body, data) {
		return fmt.Errorf("GET (encoded) %q, want %q", a.body, data)
	}
	return nil
}

func caseFilesOverwrite(e *env) error {
	if err := e.clean("ow"); err != nil {
		return err
	}
	for _, s := range []string{"a much longer first version\n", "v2\n"} {
		a, err := e.put("ow/f.txt", []byte(s), "")
		if err != nil {
			return err
		}
		if err := a.expect(204); err != nil {
			return err
		}
		disk, err := os.ReadFile(filepath.Join(e.root, "ow/f.txt"))
		if err != nil || string(disk) != s {
			return fmt.Errorf("on disk %q (%v), want %q", disk, err, s)
		}
	}
	// temp file + rename: nothing else is left in the directory
	ents, err := os.ReadDir(filepath.Join(e.root, "ow"))
	if err != nil {
		return err
	}
	if len(ents) != 1 {
		var n []string
		for _, d := range ents {
			n = append(n, d.Name())
		}
		return fmt.Errorf("directory holds %v, want [f.txt]", n)
	}
	// a reader of the old file keeps the old content (a new inode)
	old, err := os.Open(filepath.Join(e.root, "ow/f.txt"))
	if err != nil {
		return err
	}
	defer old.Close()
	if a, err := e.put("ow/f.txt", []byte("v3\n"), ""); err != nil {
		return err
	} else if err := a.expect(204); err != nil {
		return err
	}
	b, _ := io.ReadAll(old)
	if string(b) != "v2\n" {
		return fmt.Errorf("an open reader saw %q: not a rename", b)
	}
	return nil
}

func modeOf(p string) (os.FileMode, error) {
	st, err := os.Stat(p)
	if err != nil {
		return 0, err
	}
	return st.Mode().Perm(), nil
}

func caseFilesMode(e *env) error {
	if err := e.clean("md"); err != nil {
		return err
	}
	for _, t := range []struct {
		query string
		want  os.FileMode
	}{{"?mode=0755", 0o755}, {"?mode=0600", 0o600}, {"", 0o644}} {
		a, err := e.put("md/f", []byte("x"), t.query)
		if err != nil {
			return err
		}
		if err := a.expect(204); err != nil {
			return fmt.Errorf("%q: %v", t.query, err)
		}
		m, err := modeOf(filepath.Join(e.root, "md/f"))
		if err != nil {
			return err
		}
		if m != t.want {
			return fmt.Errorf("PUT%s: mode %04o, want %04o", t.query,
				m, t.want)
		}
	}
	return nil
}

func caseFilesBadMode(e *env) error {
	if err := e.clean("bm"); err != nil {
		return err
	}
	for _, q := range []string{"?mode=0888", "?mode=755", "?mode=07555", "?mode=rw"} {
		a, err := e.put("bm/f", []byte("x"), q)
		if err != nil {
			return err
		}
		if err := a.expectError(400, "INVALID_ARGUMENT"); err != nil {
			return fmt.Errorf("PUT%s: %v", q, err)
		}
	}
	if _, err := os.Stat(filepath.Join(e.root, "bm/f")); err == nil {
		return errors.New("a refused PUT wrote the file")
	}
	return nil
}

func caseFilesMultipart(e *env) error {
	if err := e.clean("mp"); err != nil {
		return err
	}
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	fw, err := w.CreateFormFile("file", "ignored-name.txt")
	if err != nil {
		return err
	}
	fw.Write([]byte("from a form\n"))
	w.Close()
	a, err := e.req("PUT", "/v1/files/mp/up.txt", &buf, w.FormDataContentType())
	if err != nil {
		return err
	}
	if err := a.expect(204); err != nil {
		return err
	}
	disk, err := os.ReadFile(filepath.Join(e.root, "mp/up.txt"))
	if err != nil || string(disk) != "from a form\n" {
		return fmt.Errorf("on disk %q (%v)", disk, err)
	}
	return nil
}

func caseFilesHead(e *env) error {
	if err := e.clean("hd"); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(e.root, "hd/f"), []byte("12345"), 0o644); err != nil {
		return err
	}
	a, err := e.req("HEAD", "/v1/files/hd/f", nil, "")
	if err != nil {
		return err
	}
	if err := a.expect(200); err != nil {
		return err
	}
	if cl := a.header.Get("Content-Length"); cl != "5" {
		return fmt.Errorf("Content-Length %q, want 5", cl)
	}
	if len(a.body) != 0 {
		return fmt.Errorf("HEAD has a body %q", a.body)
	}
	a, err = e.req("HEAD", "/v1/files/hd/missing", nil, "")
	if err != nil {
		return err
	}
	return a.expect(404)
}

func caseFilesMissing(e *env) error {
	a, err := e.req("GET", "/v1/files/no/such/file", nil, "")
	if err != nil {
		return err
	}
	return a.expectError(404, "NOT_FOUND")
}

type fileEntry struct {
	Name       *string `json:"name"`
	Size       *int64  `json:"size"`
	Type       *string `json:"type"`
	ModifiedAt *string `json:"modified_at"`
	Mode       *string `json:"mode"`
}

func caseFilesListing(e *env) error {
	if err := e.clean("ls"); err != nil {
		return err
	}
	d := filepath.Join(e.root, "ls")
	os.WriteFile(filepath.Join(d, "f.txt"), []byte("abc"), 0o640)
	os.Mkdir(filepath.Join(d, "sub"), 0o755)
	when := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	os.Chtimes(filepath.Join(d, "f.txt"), when, when)
	a, err := e.req("GET", "/v1/files/ls", nil, "")
	if err != nil {
		return err
	}
	if err := a.expect(200); err != nil {
		return err
	}
	if !strings.HasPrefix(a.header.Get("Content-Type"), "application/json") {
		return fmt.Errorf("content type %q", a.header.Get("Content-Type"))
	}
	var v struct {
		Path    *string     `json:"path"`
		Entries []fileEntry `json:"entries"`
	}
	if err := json.Unmarshal(a.body, &v); err != nil {
		return err
	}
	if v.Path == nil || v.Entries == nil {
		return fmt.Errorf("listing without path or entries: %s", a.body)
	}
	got := map[string]fileEntry{}
	for _, en := range v.Entries {
		if en.Name == nil || en.Size == nil || en.Type == nil || en.ModifiedAt == nil {
			return fmt.Errorf("entry lacks a required field: %s", a.body)
		}
		got[*en.Name] = en
	}
	var names []string
	for n := range got {
		names = append(names, n)
	}
	sort.Strings(names)
	if strings.Join(names, ",") != "f.txt,sub" {
		return fmt.Errorf("entries %v, want [f.txt sub]", names)
	}
	f, s := got["f.txt"], got["sub"]
	if *f.Type != "file" || *f.Size != 3 || *s.Type != "directory" {
		return fmt.Errorf("entries %s", a.body)
	}
	t, err := time.Parse(time.RFC3339Nano, *f.ModifiedAt)
	if err != nil {
		return fmt.Errorf("modified_at %q: %v", *f.ModifiedAt, err)
	}
	if !t.Equal(when) {
		return fmt.Errorf("modified_at %s, want %s", t, when)
	}
	if f.Mode != nil && *f.Mode != "0640" {
		return fmt.Errorf("mode %q, want 0640", *f.Mode)
	}
	return nil
}

func caseFilesDelete(e *env) error {
	if err := e.clean("dl"); err != nil {
		return err
	}
	p := filepath.Join(e.root, "dl/f")
	os.WriteFile(p, []byte("x"), 0o644)
	a, err := e.req("DELETE", "/v1/files/dl/f", nil, "")
	if err != nil {
		return err
	}
	if err := a.expect(204); err != nil {
		return err
	}
	if _, err := os.Lstat(p); !os.IsNotExist(err) {
		return fmt.Errorf("file still there (%v)", err)
	}
	a, err = e.req("DELETE", "/v1/files/dl/f", nil, "")
	if err != nil {
		return err
	}
	if err := a.expectError(404, "NOT_FOUND"); err != nil {
		return err
	}
	// an empty directory goes without recursive
	os.Mkdir(filepath.Join(e.root, "dl/empty"), 0o755)
	a, err = e.req("DELETE", "/v1/files/dl/empty", nil, "")
	if err != nil {
		return err
	}
	return a.expect(204)
}

func caseFilesDeleteNonEmpty(e *env) error {
	if err := e.clean("dn"); err != nil {
		return err
	}
	os.MkdirAll(filepath.Join(e.root, "dn/d/e"), 0o755)
	os.WriteFile(filepath.Join(e.root, "dn/d/e/f"), []byte("x"), 0o644)
	for _, q := range []string{"", "?recursive=false"} {
		a, err := e.req("DELETE", "/v1/files/dn/d"+q, nil, "")
		if err != nil {
			return err
		}
		if err := a.expectError(409, "CONFLICT"); err != nil {
			return fmt.Errorf("DELETE%s: %v", q, err)
		}
	}
	if _, err := os.Stat(filepath.Join(e.root, "dn/d/e/f")); err != nil {
		return fmt.Errorf("a refused DELETE removed something: %v", err)
	}
	a, err := e.req("DELETE", "/v1/files/dn/d?recursive=true", nil, "")
	if err != nil {
		return err
	}
	if err := a.expect(204); err != nil {
		return err
	}
	if _, err := os.Lstat(filepath.Join(e.root, "dn/d")); !os.IsNotExist(err) {
		return fmt.Errorf("directory still there (%v)", err)
	}
	return nil
}

// escapes: 403 PERMISSION_DENIED, and nothing outside the root touched
func caseFilesEscapeDotdot(e *env) error {
	outside := filepath.Join(filepath.Dir(filepath.Clean(e.root)),
		"conformance-outside")
	os.RemoveAll(outside)
	for _, p := range []string{"..%2F..%2Fetc%2Fpasswd", "a%2F..%2F..%2Fconformance-outside"} {
		a, err := e.req("GET", "/v1/files/"+p, nil, "")
		if err != nil {
			return err
		}
		if err := a.expectError(403, "PERMISSION_DENIED"); err != nil {
			return fmt.Errorf("GET %s: %v", p, err)
		}
		a, err = e.put(p, []byte("x"), "")
		if err != nil {
			return err
		}
		if err := a.expectError(403, "PERMISSION_DENIED"); err != nil {
			return fmt.Errorf("PUT %s: %v", p, err)
		}
	}
	if _, err := os.Lstat(outside); err == nil {
		os.RemoveAll(outside)
		return errors.New("a PUT wrote outside the root")
	}
	return nil
}

func caseFilesEscapeSymlink(e *env) error {
	if err := e.clean("sl"); err != nil {
		return err
	}
	outside, err := os.MkdirTemp(filepath.Dir(filepath.Clean(e.root)), "conformance-out.")
	if err != nil {
		return err
	}
	defer os.RemoveAll(outside)
	os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o644)
	if err := os.Symlink(outside, filepath.Join(e.root, "sl/link")); err != nil {
		return err
	}
	for _, m := range []string{"GET", "PUT", "DELETE"} {
		var body io.Reader
		if m == "PUT" {
			body = strings.NewReader("overwritten")
		}
		a, err := e.req(m, "/v1/files/sl/link/secret", body, "application/octet-stream")
		if err != nil {
			return err
		}
		if err := a.expectError(403, "PERMISSION_DENIED"); err != nil {
			return fmt.Errorf("%s through a symlink: %v", m, err)
		}
	}
	b, err := os.ReadFile(filepath.Join(outside, "secret"))
	if err != nil || string(b) != "s" {
		return fmt.Errorf("the file outside is now %q (%v)", b, err)
	}
	return nil
}

/* gRPC */

func cfg(argv ...string) *processv1.ProcessConfig {
	return &processv1.ProcessConfig{Command: argv}
}

func (e *env) execute(c *processv1.ProcessConfig) (*processv1.ExecuteResponse, error) {
	return e.pc.Execute(e.ctx, &processv1.ExecuteRequest{Config: c})
}

func expectExec(r *processv1.ExecuteResponse, err error, code int32, out, errb string) error {
	if err != nil {
		return err
	}
	if r.ExitCode != code || string(r.Stdout) != out || string(r.Stderr) != errb {
		return fmt.Errorf("exit %d stdout %q stderr %q, want %d %q %q",
			r.ExitCode, r.Stdout, r.Stderr, code, out, errb)
	}
	return nil
}

func expectCode(err error, code codes.Code) error {
	if st, _ := status.FromError(err); st.Code() != code {
		return fmt.Errorf("status %v (%v), want %v", st.Code(), err, code)
	}
	return nil
}

func caseExecute(e *env) error {
	r, err := e.execute(cfg("sh", "-c", "echo out; echo err >&2; exit 3"))
	return expectExec(r, err, 3, "out\n", "err\n")
}

func caseExecuteArgv(e *env) error {
	r, err := e.execute(cfg("echo", "a b;$X", "*"))
	return expectExec(r, err, 0, "a b;$X *\n", "")
}

func caseExecuteEnv(e *env) error {
	c := cfg("sh", "-c", "echo \"$CONF_A $CONF_B\"")
	c.EnvVars = map[string]string{"CONF_A": "1", "CONF_B": "two words"}
	r, err := e.execute(c)
	return expectExec(r, err, 0, "1 two words\n", "")
}

func caseExecuteCwd(e *env) error {
	if err := e.clean("cwd/sub"); err != nil {
		return err
	}
	root, err := filepath.EvalSymlinks(e.root)
	if err != nil {
		return err
	}
	r, err := e.execute(cfg("pwd", "-P"))
	if err := expectExec(r, err, 0, root+"\n", ""); err != nil {
		return fmt.Errorf("default cwd: %v", err)
	}
	c := cfg("pwd", "-P")
	sub := "cwd/sub"
	c.Cwd = &sub
	r, err = e.execute(c)
	if err := expectExec(r, err, 0, root+"/cwd/sub\n", ""); err != nil {
		return fmt.Errorf("cwd %q: %v", sub, err)
	}
	esc := "../.."
	c.Cwd = &esc
	_, err = e.execute(c)
	if err := expectCode(err, codes.PermissionDenied); err != nil {
		return fmt.Errorf("cwd %q: %v", esc, err)
	}
	return nil
}

func caseExecuteErrors(e *env) error {
	_, err := e.execute(cfg())
	if err := expectCode(err, codes.InvalidArgument); err != nil {
		return fmt.Errorf("no command: %v", err)
	}
	_, err = e.execute(cfg("no-such-command-conformance"))
	if err := expectCode(err, codes.NotFound); err != nil {
		return fmt.Errorf("unknown command: %v", err)
	}
	// os/exec cannot chdir: "chdir <dir>: no such file or directory"
	c := cfg("true")
	nodir := "no-such-dir-conformance"
	c.Cwd = &nodir
	_, err = e.execute(c)
	if err := expectCode(err, codes.NotFound); err != nil {
		return fmt.Errorf("missing cwd: %v", err)
	}
	return nil
}

type started struct {
	id           int32
	out, errb    []byte
	exit         *int32
	events       []string
	afterExit    bool
	initNotFirst bool
	streamErr    error
}

// start: run the stream to its end; onInit runs after the init event
// with the process id, onOut (if not nil) after each stdout event with
// the id and the stdout so far
func (e *env) start(req *processv1.StartRequest, onInit func(int32) error,
	onOut ...func(int32, []byte) error) (*started, error) {
	s, err := e.pc.Start(e.ctx, req)
	if err != nil {
		return nil, err
	}
	var r started
	for {
		ev, err := s.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			return &r, err
		}
		if r.exit != nil {
			r.afterExit = true
		}
		switch x := ev.Event.(type) {
		case *processv1.StartResponse_Init:
			if len(r.events) != 0 {
				r.initNotFirst = true
			}
			r.events = append(r.events, "init")
			r.id = x.Init.ProcessId
			if onInit != nil {
				if err := onInit(r.id); err != nil {
					return &r, err
				}
			}
		case *processv1.StartResponse_Stdout:
			r.events = append(r.events, "stdout")
			r.out = append(r.out, x.Stdout...)
			for _, f := range onOut {
				if err := f(r.id, r.out); err != nil {
					return &r, err
				}
			}
		case *processv1.StartResponse_Stderr:
			r.events = append(r.events, "stderr")
			r.errb = append(r.errb, x.Stderr...)
		case *processv1.StartResponse_Exit:
			r.events = append(r.events, "exit")
			c := x.Exit.ExitCode
			r.exit = &c
		}
	}
	return &r, nil
}

// shape: init first with an id > 0, exactly one exit and it is last
func (r *started) shape() error {
	if len(r.events) == 0 || r.events[0] != "init" || r.initNotFirst || r.id <= 0 {
		return fmt.Errorf("events %v, id %d: want init (id > 0) first", r.events, r.id)
	}
	if r.exit == nil || r.afterExit {
		return fmt.Errorf("events %v: want one exit event, last", r.events)
	}
	return nil
}

func caseStart(e *env) error {
	r, err := e.start(&processv1.StartRequest{
		Config: cfg("sh", "-c", "echo a; echo b >&2; exit 2")}, nil)
	if err != nil {
		return err
	}
	if err := r.shape(); err != nil {
		return err
	}
	if string(r.out) != "a\n" || string(r.errb) != "b\n" || *r.exit != 2 {
		return fmt.Errorf("stdout %q stderr %q exit %d", r.out, r.errb, *r.exit)
	}
	return nil
}

func (e *env) stdin(id int32, data []byte) error {
	_, err := e.pc.WriteStdin(e.ctx, &processv1.WriteStdinRequest{ProcessId: id,
		Payload: &processv1.WriteStdinRequest_Input{Input: data}})
	return err
}

func (e *env) eof(id int32) error {
	_, err := e.pc.WriteStdin(e.ctx, &processv1.WriteStdinRequest{ProcessId: id,
		Payload: &processv1.WriteStdinRequest_Eof{Eof: &emptypb.Empty{}}})
	return err
}

func caseStartStdin(e *env) error {
	r, err := e.start(&processv1.StartRequest{Config: cfg("cat")},
		func(id int32) error {
			if err := e.stdin(id, []byte("one ")); err != nil {
				return err
			}
			if err := e.stdin(id, []byte("two\n")); err != nil {
				return err
			}
			return e.eof(id)
		})
	if err != nil {
		return err
	}
	if err := r.shape(); err != nil {
		return err
	}
	if string(r.out) != "one two\n" || *r.exit != 0 {
		return fmt.Errorf("stdout %q exit %d", r.out, *r.exit)
	}
	return nil
}

func caseStartSignal(e *env) error {
	var sigErr error
	r, err := e.start(&processv1.StartRequest{Config: cfg("sleep", "100")},
		func(id int32) error {
			_, sigErr = e.pc.SendSignal(e.ctx, &processv1.SendSignalRequest{
				ProcessId: id, Signal: processv1.Signal_SIGNAL_SIGTERM})
			return sigErr
		})
	if err != nil {
		return err
	}
	if err := r.shape(); err != nil {
		return err
	}
	if *r.exit == 0 {
		return errors.New("exit 0 after SIGTERM")
	}
	// the id is gone once the process ended
	_, err = e.pc.SendSignal(e.ctx, &processv1.SendSignalRequest{
		ProcessId: r.id, Signal: processv1.Signal_SIGNAL_SIGTERM})
	if err := expectCode(err, codes.NotFound); err != nil {
		return fmt.Errorf("after exit: %v", err)
	}
	return nil
}

func caseStartPty(e *env) error {
	resized := false
	r, err := e.start(&processv1.StartRequest{
		Config: cfg("sh", "-c", "stty size; read x; stty size; test -t 0 && test -t 1 && echo tty"),
		Pty:    &processv1.PTY{Cols: 80, Rows: 24}}, nil,
		// once the first size is out: resize, then let it go on
		func(id int32, out []byte) error {
			if resized || !bytes.Contains(out, []byte("\r\n")) {
				return nil
			}
			resized = true
			_, err := e.pc.ResizeTTY(e.ctx, &processv1.ResizeTTYRequest{
				ProcessId: id, Cols: 100, Rows: 30})
			if err != nil {
				return err
			}
			return e.stdin(id, []byte("\n"))
		})
	if err != nil {
		return err
	}
	if err := r.shape(); err != nil {
		return err
	}
	// a terminal: one stream, CR LF, the sizes before and after (the
	// line typed is echoed between them)
	if string(r.out) != "24 80\r\n\r\n30 100\r\ntty\r\n" || len(r.errb) != 0 || *r.exit != 0 {
		return fmt.Errorf("stdout %q stderr %q exit %d", r.out, r.errb, *r.exit)
	}
	return nil
}

func caseNotFound(e *env) error {
	const id = 999999
	_, err := e.pc.SendSignal(e.ctx, &processv1.SendSignalRequest{
		ProcessId: id, Signal: processv1.Signal_SIGNAL_SIGTERM})
	if err := expectCode(err, codes.NotFound); err != nil {
		return fmt.Errorf("SendSignal: %v", err)
	}
	if err := expectCode(e.stdin(id, []byte("x")), codes.NotFound); err != nil {
		return fmt.Errorf("WriteStdin: %v", err)
	}
	if err := expectCode(e.eof(id), codes.NotFound); err != nil {
		return fmt.Errorf("WriteStdin EOF: %v", err)
	}
	_, err = e.pc.ResizeTTY(e.ctx, &processv1.ResizeTTYRequest{
		ProcessId: id, Cols: 80, Rows: 24})
	if err := expectCode(err, codes.NotFound); err != nil {
		return fmt.Errorf("ResizeTTY: %v", err)
	}
	return nil
}

func caseSignalInvalid(e *env) error {
	var sigErr error
	r, err := e.start(&processv1.StartRequest{Config: cfg("cat")},
		func(id int32) error {
			for _, s := range []processv1.Signal{
				processv1.Signal_SIGNAL_UNSPECIFIED, processv1.Signal(1)} {
				_, err := e.pc.SendSignal(e.ctx, &processv1.SendSignalRequest{
					ProcessId: id, Signal: s})
				if err := expectCode(err, codes.InvalidArgument); err != nil {
					sigErr = fmt.Errorf("signal %d: %v", s, err)
				}
			}
			// the process is still there: EOF ends it
			return e.eof(id)
		})
	if err != nil {
		return err
	}
	if sigErr != nil {
		return sigErr
	}
	if err := r.shape(); err != nil {
		return err
	}
	if *r.exit != 0 {
		return fmt.Errorf("exit %d, want 0", *r.exit)
	}
	return nil
}

/* benchmarks */

func benchExec(pc processv1.ProcessServiceClient, n int) error {
	ctx := context.Background()
	req := &processv1.ExecuteRequest{Config: cfg("true")}
	var lat []time.Duration
	for i := 0; i < n+10; i++ {
		t0 := time.Now()
		r, err := pc.Execute(ctx, req)
		d := time.Since(t0)
		if err != nil {
			return err
		}
		if r.ExitCode != 0 {
			return fmt.Errorf("true exited %d", r.ExitCode)
		}
		if i >= 10 {
			lat = append(lat, d)
		}
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	pct := func(p float64) int64 {
		i := int(p*float64(len(lat))+0.5) - 1
		if i < 0 {
			i = 0
		}
		if i >= len(lat) {
			i = len(lat) - 1
		}
		return lat[i].Microseconds()
	}
	fmt.Printf("p50_us %d\np99_us %d\nmean_us %d\n", pct(0.50), pct(0.99),
		(sum / time.Duration(len(lat))).Microseconds())
	return nil
}

func benchStream(pc processv1.ProcessServiceClient, n int64) error {
	ctx := context.Background()
	t0 := time.Now()
	s, err := pc.Start(ctx, &processv1.StartRequest{Config: cfg("head", "-c",
		strconv.FormatInt(n, 10), "/dev/zero")})
	if err != nil {
		return err
	}
	var got int64
	exit := int32(-2)
	for {
		ev, err := s.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		switch x := ev.Event.(type) {
		case *processv1.StartResponse_Stdout:
			got += int64(len(x.Stdout))
		case *processv1.StartResponse_Exit:
			exit = x.Exit.ExitCode
		}
	}
	sec := time.Since(t0).Seconds()
	if got != n || exit != 0 {
		return fmt.Errorf("streamed %d bytes, exit %d; want %d, 0", got, exit, n)
	}
	fmt.Printf("bytes %d\nseconds %.3f\nmb_per_s %.1f\n", got, sec,
		float64(got)/1e6/sec)
	return nil
}
