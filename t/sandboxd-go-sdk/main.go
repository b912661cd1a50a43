// sandboxd-go-sdk: drives a sandbox through the public API of the
// upstream Go SDK, sigs.k8s.io/agent-sandbox@v1.0.3 clients/go/sandbox,
// for t/t3112-sandboxd-go-sdk.sh. It opens one sandbox (a SandboxClaim
// on the warm pool -pool, through the API server of $KUBECONFIG), runs
// the steps given as arguments in order, prints one or more lines per
// step, and closes the sandbox (the claim is deleted).
//
//	sandboxd-go-sdk [options] <step>...
//
// Options:
//
//	-pool=<name>       the SandboxWarmPool (WarmPoolName)
//	-runtime=<r>       sandboxd (default) or legacy-python
//	-rest-port=<n>     SandboxdRESTPort; -grpc-port=<n> SandboxdGRPCPort
//	-api-url=<url>     APIURL (Direct URL mode, e.g. the router)
//
// With -runtime=sandboxd the connectivity is in-cluster-pod-ip: the SDK
// dials Sandbox status.podIPs on the two ports. Steps:
//
//	run <shell line>        exit <code> / stdout <%q> / stderr <%q>
//	write <path> <file>     the local file's bytes to path: "written"
//	read <path> <file>      path's bytes into the local file: "read <n>"
//	cat <path>              content <%q>
//	list <path>             one "entry <name> <type> <size> <mode>" a
//	                        child, sorted by name
//	exists <path>           exists <true|false>
//	delete <path>           deleted; delete-r <path>: recursively
//
// A step that fails prints "error <kind>: <message>", kind "http <status>"
// for an HTTPError, "grpc" for a ProcessService status, else "client";
// the next step still runs and the exit status is 1.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"

	"sigs.k8s.io/agent-sandbox/clients/go/sandbox"
)

func main() {
	pool := flag.String("pool", "", "warm pool")
	runtime := flag.String("runtime", string(sandbox.RuntimeSandboxd), "runtime")
	restPort := flag.Int("rest-port", 0, "sandboxd REST port")
	grpcPort := flag.Int("grpc-port", 0, "sandboxd gRPC port")
	apiURL := flag.String("api-url", "", "Direct URL")
	flag.Parse()

	opts := sandbox.Options{
		WarmPoolName:     *pool,
		Runtime:          sandbox.Runtime(*runtime),
		SandboxdRESTPort: *restPort,
		SandboxdGRPCPort: *grpcPort,
		APIURL:           *apiURL,
		Quiet:            os.Getenv("SDK_VERBOSE") == "",
	}
	if opts.Runtime == sandbox.RuntimeSandboxd && opts.APIURL == "" {
		opts.Connectivity = sandbox.ConnectivityInClusterPodIP
	}
	ctx := context.Background()
	sb, err := sandbox.New(ctx, opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "sandboxd-go-sdk: New: %v\n", err)
		os.Exit(2)
	}
	if err := sb.Open(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "sandboxd-go-sdk: Open: %v\n", err)
		os.Exit(2)
	}
	failed := false
	args := flag.Args()
	for len(args) > 0 {
		n, err := step(ctx, sb, args)
		if err != nil {
			failed = true
			fmt.Printf("error %s: %v\n", kind(err), err)
		}
		args = args[n:]
	}
	if err := sb.Close(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "sandboxd-go-sdk: Close: %v\n", err)
		os.Exit(2)
	}
	if failed {
		os.Exit(1)
	}
}

func kind(err error) string {
	var he *sandbox.HTTPError
	if errors.As(err, &he) {
		return fmt.Sprintf("http %d", he.StatusCode)
	}
	if strings.Contains(err.Error(), "process service returned") {
		return "grpc"
	}
	return "client"
}

// need returns the step's arguments or exits on a usage error.
func need(args []string, n int) []string {
	if len(args) < n+1 {
		fmt.Fprintf(os.Stderr, "sandboxd-go-sdk: %s needs %d argument(s)\n", args[0], n)
		os.Exit(2)
	}
	return args[1 : n+1]
}

// step runs the step at args[0]; it returns how many arguments it took.
func step(ctx context.Context, sb *sandbox.Sandbox, args []string) (int, error) {
	switch args[0] {
	case "run":
		a := need(args, 1)
		r, err := sb.Run(ctx, a[0])
		if err == nil {
			fmt.Printf("exit %d\nstdout %q\nstderr %q\n", r.ExitCode, r.Stdout, r.Stderr)
		}
		return 2, err
	case "write":
		a := need(args, 2)
		data, err := os.ReadFile(a[1])
		if err != nil {
			fmt.Fprintf(os.Stderr, "sandboxd-go-sdk: %v\n", err)
			os.Exit(2)
		}
		if err = sb.Write(ctx, a[0], data); err == nil {
			fmt.Println("written")
		}
		return 3, err
	case "read", "cat":
		n := 2
		if args[0] == "read" {
			n = 3
		}
		a := need(args, n-1)
		data, err := sb.Read(ctx, a[0])
		if err != nil {
			return n, err
		}
		if args[0] == "cat" {
			fmt.Printf("content %q\n", data)
			return n, nil
		}
		if err := os.WriteFile(a[1], data, 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "sandboxd-go-sdk: %v\n", err)
			os.Exit(2)
		}
		fmt.Printf("read %d\n", len(data))
		return n, nil
	case "list":
		a := need(args, 1)
		entries, err := sb.List(ctx, a[0])
		if err != nil {
			return 2, err
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
		for _, e := range entries {
			size := fmt.Sprint(e.Size)
			if e.Type == sandbox.FileTypeDirectory {
				size = "-"
			}
			fmt.Printf("entry %s %s %s %s\n", e.Name, e.Type, size, e.Mode)
		}
		return 2, nil
	case "exists":
		a := need(args, 1)
		ok, err := sb.Exists(ctx, a[0])
		if err == nil {
			fmt.Printf("exists %t\n", ok)
		}
		return 2, err
	case "delete", "delete-r":
		a := need(args, 1)
		err := sb.Delete(ctx, a[0], args[0] == "delete-r")
		if err == nil {
			fmt.Println("deleted")
		}
		return 2, err
	}
	fmt.Fprintf(os.Stderr, "sandboxd-go-sdk: unknown step %q\n", args[0])
	os.Exit(2)
	return 0, nil
}
