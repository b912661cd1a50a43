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
//
// start-stdin writes <input> with WriteStdin after the init event, then
// EOF; start-term sends SIGTERM after the init event; start-pty starts
// on an 80x24 PTY, resizes it to 100x30, then writes "\n".
//
// GRPC_CWD sets config.cwd, GRPC_ENV (K=V) one of config.env_vars,
// GRPC_TOKEN the authorization metadata (Bearer), GRPC_MAX_RECV the
// largest answer message taken (gRPC's default: 4 MiB). It prints the answer
// on stdout, one field a line (bytes quoted as Go does), or
// "status <code>: <message>" and exits 1 for an error status.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
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
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
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
