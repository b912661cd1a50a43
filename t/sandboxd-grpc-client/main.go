// sandboxd-grpc-client: drive sandboxd's gRPC ProcessService
// (agent-sandbox v1.0.3, packages/sandboxd/spec/process/v1) with
// upstream's generated Go client, for t3111. Usage:
//
//	sandboxd-grpc-client <addr> execute <argv>...
//	sandboxd-grpc-client <addr> start <argv>...
//	sandboxd-grpc-client <addr> signal <process id>
//	sandboxd-grpc-client <addr> start-stdin <input> <argv>...
//	sandboxd-grpc-client <addr> start-term <argv>...
//	sandboxd-grpc-client <addr> start-pty <argv>...
//	sandboxd-grpc-client <addr> start-noread <go-file> <bytes> <argv>...
//	sandboxd-grpc-client <addr> execute-cancel <go-file> <argv>... -- <argv>...
//	sandboxd-grpc-client <addr> repeat <go-file> <n> <argv>...
//
// start-stdin writes <input> with WriteStdin after the init event, then
// EOF; start-term sends SIGTERM after the init event; start-pty starts
// on an 80x24 PTY, resizes it to 100x30, then writes "\n".
//
// start-noread reads nothing after the init event until <go-file>
// exists, then reads <bytes> of stdout, checks that they repeat the
// first line, prints "read <bytes> bytes intact" and cancels the call
// ("cancelled"). execute-cancel runs the two argvs as two Execute calls
// at once on one connection, cancels the first ("first: status
// Canceled") when <go-file> exists and prints the answer of the second.
// repeat makes <n> calls of <argv> one after the other on one
// connection, Start and Execute in turn, each to exit 0, prints
// "done <n>" and waits for <go-file> before it closes the connection.
//
// GRPC_CWD sets config.cwd, GRPC_ENV (K=V) one of config.env_vars,
// GRPC_TOKEN the authorization metadata (Bearer), GRPC_MAX_RECV the
// largest answer message taken (gRPC's default: 4 MiB), GRPC_DEADLINE
// the seconds the whole run may take (default 60). It prints the answer
// on stdout, one field a line (bytes quoted as Go does), or
// "status <code>: <message>" and exits 1 for an error status.
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
	processv1 "sigs.k8s.io/agent-sandbox/packages/sandboxd/spec/process/v1"
)

func fail(err error) {
	st, _ := status.FromError(err)
	fmt.Printf("status %s: %s\n", st.Code(), st.Message())
	os.Exit(1)
}

// waitFile waits until path exists (the test's go-ahead) or ctx ends.
func waitFile(ctx context.Context, path string) {
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		select {
		case <-ctx.Done():
			fail(ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// startNoRead: the init event, then nothing read until goFile exists,
// then want bytes of stdout, which must repeat its first line.
func startNoRead(ctx context.Context, c processv1.ProcessServiceClient,
	cfg *processv1.ProcessConfig, goFile string, want int) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s, err := c.Start(ctx, &processv1.StartRequest{Config: cfg})
	if err != nil {
		fail(err)
	}
	ev, err := s.Recv()
	if err != nil {
		fail(err)
	}
	if ev.GetInit() == nil {
		fmt.Println("no init event first")
		os.Exit(1)
	}
	fmt.Printf("init %t\n", ev.GetInit().ProcessId > 0)
	waitFile(ctx, goFile)
	var line, got []byte
	n := 0
	for n < want {
		ev, err := s.Recv()
		if err != nil {
			fail(err)
		}
		out := ev.GetStdout()
		if out == nil {
			fmt.Printf("unexpected event %v\n", ev)
			os.Exit(1)
		}
		if line == nil {
			got = append(got, out...)
			if i := bytes.IndexByte(got, '\n'); i >= 0 {
				line = append([]byte(nil), got[:i+1]...)
				out = got
			} else {
				continue
			}
		}
		for _, b := range out {
			if b != line[n%len(line)] {
				fmt.Printf("byte %d differs\n", n)
				os.Exit(1)
			}
			n++
		}
	}
	fmt.Printf("read %d bytes intact\n", want)
	cancel()
	for err == nil { // what was received before the cancel
		_, err = s.Recv()
	}
	if status.Code(err) != codes.Canceled {
		fmt.Printf("after cancel: %v\n", err)
		os.Exit(1)
	}
	fmt.Println("cancelled")
}

// executeCancel: Execute a and b at once on one connection, cancel a
// once goFile exists, then print b's answer.
func executeCancel(ctx context.Context, c processv1.ProcessServiceClient,
	goFile string, a, b []string) {
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	first := make(chan error, 1)
	go func() {
		_, err := c.Execute(actx, &processv1.ExecuteRequest{
			Config: &processv1.ProcessConfig{Command: a}})
		first <- err
	}()
	second := make(chan *processv1.ExecuteResponse, 1)
	go func() {
		r, err := c.Execute(ctx, &processv1.ExecuteRequest{
			Config: &processv1.ProcessConfig{Command: b}})
		if err != nil {
			fail(err)
		}
		second <- r
	}()
	waitFile(ctx, goFile)
	cancel()
	err := <-first
	st, _ := status.FromError(err)
	fmt.Printf("first: status %s\n", st.Code())
	r := <-second
	fmt.Printf("second: exit %d\nstdout %q\nstderr %q\n", r.ExitCode,
		r.Stdout, r.Stderr)
}

// repeat: n calls of cfg one after the other, Start and Execute in
// turn, each to exit 0; then wait for goFile.
func repeat(ctx context.Context, c processv1.ProcessServiceClient,
	cfg *processv1.ProcessConfig, goFile string, n int) {
	for i := 0; i < n; i++ {
		code := int32(-2)
		if i%2 == 1 {
			r, err := c.Execute(ctx, &processv1.ExecuteRequest{Config: cfg})
			if err != nil {
				fail(err)
			}
			code = r.ExitCode
		} else {
			s, err := c.Start(ctx, &processv1.StartRequest{Config: cfg})
			if err != nil {
				fail(err)
			}
			for {
				ev, err := s.Recv()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					fail(err)
				}
				if e := ev.GetExit(); e != nil {
					code = e.ExitCode
				}
			}
		}
		if code != 0 {
			fmt.Printf("call %d: exit %d\n", i, code)
			os.Exit(1)
		}
	}
	fmt.Printf("done %d\n", n)
	waitFile(ctx, goFile)
}

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: sandboxd-grpc-client <addr> <method> <args>...")
		os.Exit(129)
	}
	addr, method, args := os.Args[1], os.Args[2], os.Args[3:]
	opts := []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials())}
	if n, err := strconv.Atoi(os.Getenv("GRPC_MAX_RECV")); err == nil {
		opts = append(opts, grpc.WithDefaultCallOptions(
			grpc.MaxCallRecvMsgSize(n)))
	}
	conn, err := grpc.NewClient(addr, opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	defer conn.Close()
	deadline := 60
	if n, err := strconv.Atoi(os.Getenv("GRPC_DEADLINE")); err == nil {
		deadline = n
	}
	ctx, cancel := context.WithTimeout(context.Background(),
		time.Duration(deadline)*time.Second)
	defer cancel()
	if tok := os.Getenv("GRPC_TOKEN"); tok != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization",
			"Bearer "+tok)
	}
	c := processv1.NewProcessServiceClient(conn)
	cfg := &processv1.ProcessConfig{Command: args}
	if cwd, ok := os.LookupEnv("GRPC_CWD"); ok {
		cfg.Cwd = &cwd
	}
	if kv := os.Getenv("GRPC_ENV"); kv != "" {
		k, v, _ := strings.Cut(kv, "=")
		cfg.EnvVars = map[string]string{k: v}
	}
	switch method {
	case "execute":
		r, err := c.Execute(ctx, &processv1.ExecuteRequest{Config: cfg})
		if err != nil {
			fail(err)
		}
		fmt.Printf("exit %d\nstdout %q\nstderr %q\n", r.ExitCode,
			r.Stdout, r.Stderr)
	case "start", "start-stdin", "start-term", "start-pty":
		input := ""
		if method == "start-stdin" {
			input, cfg.Command = args[0], args[1:]
		}
		req := &processv1.StartRequest{Config: cfg}
		if method == "start-pty" {
			req.Pty = &processv1.PTY{Cols: 80, Rows: 24}
		}
		s, err := c.Start(ctx, req)
		if err != nil {
			fail(err)
		}
		var out, errb []byte
		for {
			ev, err := s.Recv()
			if err == io.EOF {
				break
			}
			if err != nil {
				fail(err)
			}
			switch e := ev.Event.(type) {
			case *processv1.StartResponse_Init:
				fmt.Printf("init %t\n", e.Init.ProcessId > 0)
				id := e.Init.ProcessId
				switch method {
				case "start-stdin":
					_, err = c.WriteStdin(ctx, &processv1.WriteStdinRequest{
						ProcessId: id,
						Payload:   &processv1.WriteStdinRequest_Input{Input: []byte(input)}})
					if err == nil {
						_, err = c.WriteStdin(ctx, &processv1.WriteStdinRequest{
							ProcessId: id,
							Payload:   &processv1.WriteStdinRequest_Eof{Eof: &emptypb.Empty{}}})
					}
				case "start-term":
					_, err = c.SendSignal(ctx, &processv1.SendSignalRequest{
						ProcessId: id,
						Signal:    processv1.Signal_SIGNAL_SIGTERM})
				case "start-pty":
					_, err = c.ResizeTTY(ctx, &processv1.ResizeTTYRequest{
						ProcessId: id, Cols: 100, Rows: 30})
					if err == nil {
						_, err = c.WriteStdin(ctx, &processv1.WriteStdinRequest{
							ProcessId: id,
							Payload:   &processv1.WriteStdinRequest_Input{Input: []byte("\n")}})
					}
				}
				if err != nil {
					fail(err)
				}
			case *processv1.StartResponse_Stdout:
				out = append(out, e.Stdout...)
			case *processv1.StartResponse_Stderr:
				errb = append(errb, e.Stderr...)
			case *processv1.StartResponse_Exit:
				fmt.Printf("stdout %q\nstderr %q\nexit %d\n", out,
					errb, e.Exit.ExitCode)
			}
		}
	case "start-noread":
		want, _ := strconv.Atoi(args[1])
		cfg.Command = args[2:]
		startNoRead(ctx, c, cfg, args[0], want)
	case "execute-cancel":
		var a, b []string
		for i, arg := range args[1:] {
			if arg == "--" {
				a, b = args[1:i+1], args[i+2:]
				break
			}
		}
		executeCancel(ctx, c, args[0], a, b)
	case "repeat":
		n, _ := strconv.Atoi(args[1])
		cfg.Command = args[2:]
		repeat(ctx, c, cfg, args[0], n)
	case "signal":
		id, _ := strconv.Atoi(args[0])
		_, err := c.SendSignal(ctx, &processv1.SendSignalRequest{
			ProcessId: int32(id),
			Signal:    processv1.Signal_SIGNAL_SIGTERM})
		if err != nil {
			fail(err)
		}
		fmt.Println("ok")
	default:
		fmt.Fprintln(os.Stderr, "unknown method", method)
		os.Exit(129)
	}
}
