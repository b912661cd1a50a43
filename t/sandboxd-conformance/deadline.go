// The cases of how a call starts and ends beyond its method: a command
// that cannot start, compression, grpc-timeout. Some speak HTTP/2
// themselves (golang.org/x/net/http2, as grpc-go's own transport
// does), to send what grpc-go's client never sends (a malformed
// grpc-timeout) or to wait for the server's answer past a deadline
// that a grpc-go client would have ended itself (RST_STREAM).
package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/net/http2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding/gzip"
	"google.golang.org/protobuf/proto"
	processv1 "sigs.k8s.io/agent-sandbox/packages/sandboxd/spec/process/v1"
)

// a command that does not start is an error status, and Start sends no
// event (upstream's mapCommandError(); os/exec's errors)
func caseStartErrors(e *env) error {
	nodir := "no-such-dir-conformance"
	for _, t := range []struct {
		what string
		c    *processv1.ProcessConfig
		code codes.Code
	}{
		{"no command", cfg(), codes.InvalidArgument},
		{"unknown command", cfg("no-such-command-conformance"), codes.NotFound},
		{"missing cwd", &processv1.ProcessConfig{Command: []string{"true"}, Cwd: &nodir}, codes.NotFound},
	} {
		r, err := e.start(&processv1.StartRequest{Config: t.c}, nil)
		if err := expectCode(err, t.code); err != nil {
			return fmt.Errorf("%s: %v", t.what, err)
		}
		if r != nil && len(r.events) != 0 {
			return fmt.Errorf("%s: events %v, want none", t.what, r.events)
		}
	}
	return nil
}

// a command runs without a shell (upstream's exec.Command): a script
// without "#!" is not run by sh but fails to start (ENOEXEC: INTERNAL),
// and one whose interpreter is missing is NOT_FOUND (ENOENT), where a
// shell would exit 127; for Execute and for Start, which sends no event
func caseExecNoShell(e *env) error {
	files := map[string]string{
		"noshebang-conformance.sh": "echo ran by a shell\n",
		"badinterp-conformance.sh": "#!/no/such/interpreter-conformance\necho ran\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(e.root, name), []byte(body), 0o755); err != nil {
			return err
		}
	}
	for _, t := range []struct {
		file string
		code codes.Code
	}{
		{"./noshebang-conformance.sh", codes.Internal},
		{"./badinterp-conformance.sh", codes.NotFound},
	} {
		r, err := e.execute(cfg(t.file))
		if err := expectCode(err, t.code); err != nil {
			return fmt.Errorf("Execute %s: %v (answer %v)", t.file, err, r)
		}
		s, err := e.start(&processv1.StartRequest{Config: cfg(t.file)}, nil)
		if err := expectCode(err, t.code); err != nil {
			return fmt.Errorf("Start %s: %v", t.file, err)
		}
		if s != nil && len(s.events) != 0 {
			return fmt.Errorf("Start %s: events %v, want none", t.file, s.events)
		}
	}
	return nil
}

// a gzip-compressed request: grpc-go's server without a Decompressor
// for it (upstream registers none) answers UNIMPLEMENTED
func caseCompressed(e *env) error {
	conn, err := grpc.NewClient(e.addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.UseCompressor(gzip.Name)))
	if err != nil {
		return err
	}
	defer conn.Close()
	pc := processv1.NewProcessServiceClient(conn)
	_, err = pc.Execute(e.ctx, &processv1.ExecuteRequest{Config: cfg("true")})
	if err := expectCode(err, codes.Unimplemented); err != nil {
		return fmt.Errorf("Execute: %v", err)
	}
	s, err := pc.Start(e.ctx, &processv1.StartRequest{Config: cfg("true")})
	if err == nil {
		_, err = s.Recv()
	}
	if err := expectCode(err, codes.Unimplemented); err != nil {
		return fmt.Errorf("Start: %v", err)
	}
	// grpc-go looks at grpc-encoding before the message (its
	// processUnaryRPC()), and at the flag against it (checkRecvPayload())
	req := &processv1.ExecuteRequest{Config: cfg("true")}
	for _, t := range []struct {
		flag byte
		enc  string
		code codes.Code
	}{{0, "gzip", codes.Unimplemented}, {1, "", codes.Internal},
		{1, "identity", codes.Internal}} {
		hdr := []string{}
		if t.enc != "" {
			hdr = append(hdr, "grpc-encoding", t.enc)
		}
		a, err := e.rawFlag("Execute", req, t.flag, hdr...)
		if err != nil {
			return err
		}
		if a.status != strconv.Itoa(int(t.code)) || len(a.msgs) != 0 {
			return fmt.Errorf("flag %d, grpc-encoding %q: grpc-status %q %q, %d messages; want %d",
				t.flag, t.enc, a.status, a.message, len(a.msgs), t.code)
		}
	}
	return nil
}

// rawAnswer: what a call answered, by HTTP/2 itself
type rawAnswer struct {
	httpStatus int
	status     string // grpc-status, "" if none
	message    string // grpc-message, as sent
	msgs       [][]byte
}

// raw calls method with message m and the extra headers hdr (name,
// value, ...) and reads the answer to its end, within 60 s
func (e *env) raw(method string, m proto.Message, hdr ...string) (*rawAnswer, error) {
	return e.rawFlag(method, m, 0, hdr...)
}

// rawFlag: raw with the given compressed flag on the message (its
// bytes are not compressed)
func (e *env) rawFlag(method string, m proto.Message, flag byte, hdr ...string) (*rawAnswer, error) {
	b, err := proto.Marshal(m)
	if err != nil {
		return nil, err
	}
	body := make([]byte, 5, 5+len(b))
	body[0] = flag
	binary.BigEndian.PutUint32(body[1:], uint32(len(b)))
	body = append(body, b...)
	tr := &http2.Transport{AllowHTTP: true,
		DialTLSContext: func(ctx context.Context, network, addr string, _ *tls.Config) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		}}
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(e.ctx, 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "POST",
		"http://"+e.addr+"/process.v1.ProcessService/"+method, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("content-type", "application/grpc")
	req.Header.Set("te", "trailers")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	a := &rawAnswer{httpStatus: resp.StatusCode}
	for len(data) >= 5 {
		n := int(binary.BigEndian.Uint32(data[1:5]))
		if len(data) < 5+n {
			return nil, fmt.Errorf("a message cut short: %d of %d bytes", len(data)-5, n)
		}
		a.msgs = append(a.msgs, data[5:5+n])
		data = data[5+n:]
	}
	if len(data) != 0 {
		return nil, fmt.Errorf("%d bytes that are no message", len(data))
	}
	for _, h := range []http.Header{resp.Header, resp.Trailer} {
		if v := h.Get("grpc-status"); v != "" {
			a.status = v
			a.message = h.Get("grpc-message")
		}
	}
	return a, nil
}

// a malformed grpc-timeout is grpc-go's INTERNAL with HTTP status 400
// (its writeEarlyAbort(): "malformed grpc-timeout: ...")
func caseTimeoutMalformed(e *env) error {
	for _, v := range []string{"1", "1x", "-1S", "1.5S", "123456789S"} {
		a, err := e.raw("Execute", &processv1.ExecuteRequest{Config: cfg("true")},
			"grpc-timeout", v)
		if err != nil {
			return fmt.Errorf("grpc-timeout %q: %v", v, err)
		}
		want := strconv.Itoa(int(codes.Internal))
		if a.httpStatus != 400 || a.status != want ||
			!strings.HasPrefix(a.message, "malformed grpc-timeout") || len(a.msgs) != 0 {
			return fmt.Errorf("grpc-timeout %q: HTTP %d, grpc-status %q %q, %d messages; want 400, %s malformed grpc-timeout...",
				v, a.httpStatus, a.status, a.message, len(a.msgs), want)
		}
	}
	return nil
}

// gone: the process of the pid in file name (of the root) has ended,
// within 10 s
func (e *env) gone(name string) error {
	b, err := os.ReadFile(filepath.Join(e.root, name))
	if err != nil {
		return err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return err
	}
	for i := 0; i < 100; i++ {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("process %d still runs after its deadline", pid)
}

// deadlineEnd: the answer of a call past its grpc-timeout (err: that
// of raw()) is DEADLINE_EXCEEDED or RST_STREAM CANCEL (grpc-go's
// server resets the stream when the deadline passes, its
// closeStream(ErrCodeCancel)); n: how many messages it may hold
func deadlineEnd(a *rawAnswer, err error, n int) error {
	var se http2.StreamError
	if errors.As(err, &se) && se.Code == http2.ErrCodeCancel {
		return nil
	}
	if err != nil {
		return err
	}
	want := strconv.Itoa(int(codes.DeadlineExceeded))
	if a.status != want || len(a.msgs) != n {
		return fmt.Errorf("grpc-status %q %q, %d messages; want %s, %d",
			a.status, a.message, len(a.msgs), want, n)
	}
	return nil
}

// Execute and Start past their grpc-timeout, by a client that waits
// for the server's answer: the command is killed, the call ends
// DEADLINE_EXCEEDED (Start after its init event, without an exit)
func caseExecuteDeadline(e *env) error {
	const pidf, pids = "deadline-execute.pid", "deadline-start.pid"
	os.Remove(filepath.Join(e.root, pidf))
	os.Remove(filepath.Join(e.root, pids))
	a, err := e.raw("Execute", &processv1.ExecuteRequest{Config: cfg("sh", "-c",
		"echo $$ >"+pidf+".tmp && mv "+pidf+".tmp "+pidf+"; exec sleep 1000")},
		"grpc-timeout", "3S")
	if err := deadlineEnd(a, err, 0); err != nil {
		return fmt.Errorf("Execute: %v", err)
	}
	if err := e.gone(pidf); err != nil {
		return fmt.Errorf("Execute: %v", err)
	}
	// "0S" has passed already: nothing starts
	a, err = e.raw("Execute", &processv1.ExecuteRequest{Config: cfg("true")},
		"grpc-timeout", "0S")
	if err := deadlineEnd(a, err, 0); err != nil {
		return fmt.Errorf("Execute 0S: %v", err)
	}
	a, err = e.raw("Start", &processv1.StartRequest{Config: cfg("sh", "-c",
		"echo $$ >"+pids+".tmp && mv "+pids+".tmp "+pids+"; exec sleep 1000")},
		"grpc-timeout", "3S")
	if err := deadlineEnd(a, err, 1); err != nil && !killedAtDeadline(a) {
		return fmt.Errorf("Start: %v", err)
	}
	return e.gone(pids)
}

// killedAtDeadline: a Start answer that ends OK after its init and an
// exit event of a command killed by a signal (exit_code -1). Upstream's
// Start kills the command when its context ends and, unlike its
// Execute, does not look at the context after Wait: when its handler
// returns before grpc-go's own end of the stream, the client sees this.
// A race of upstream's, seen under load in CI; a client must take it.
func killedAtDeadline(a *rawAnswer) bool {
	if a == nil || a.status != "0" || len(a.msgs) != 2 {
		return false
	}
	var r processv1.StartResponse
	if proto.Unmarshal(a.msgs[1], &r) != nil {
		return false
	}
	return r.GetExit() != nil && r.GetExit().GetExitCode() == -1
}

// Start past its deadline (a grpc-go client's: it ends the call with
// RST_STREAM): the stream fails DEADLINE_EXCEEDED, the command is killed
func caseStartDeadline(e *env) error {
	const pidf = "deadline-start-client.pid"
	os.Remove(filepath.Join(e.root, pidf))
	ctx, cancel := context.WithTimeout(e.ctx, 3*time.Second)
	defer cancel()
	s, err := e.pc.Start(ctx, &processv1.StartRequest{Config: cfg("sh", "-c",
		"echo $$ >"+pidf+".tmp && mv "+pidf+".tmp "+pidf+"; exec sleep 1000")})
	for err == nil {
		_, err = s.Recv()
	}
	if err := expectCode(err, codes.DeadlineExceeded); err != nil {
		return err
	}
	return e.gone(pidf)
}
