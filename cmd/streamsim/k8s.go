package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/streamsim/streamsim/cluster"
	"github.com/streamsim/streamsim/sim/runner"
)

func init() {
	register("k8s", "run a composition's instances as pods on a Kubernetes cluster (run, manifests, image)", runK8sCmd)
}

func runK8sCmd(args []string) error { return runK8s(args, os.Stdout, os.Stderr) }

func k8sUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: streamsim k8s run [flags] <composition.toml>        apply, wait, collect, report, clean up")
	fmt.Fprintln(w, "       streamsim k8s manifests [flags] <composition.toml>  print the run's manifests (kubectl apply -f)")
	fmt.Fprintln(w, "       streamsim k8s image -o <archive.tar> -ref <name:tag> -binary <static binary> [-entry <name>]")
	fmt.Fprintln(w, "\nA composition is a Testground composition file (compositions/*.toml): its case, global and")
	fmt.Fprintln(w, "group test_params, group sizes and [groups.resources] (cpu, memory, memory_limit). Builder and")
	fmt.Fprintln(w, "runner are ignored. `streamsim k8s <sub> -h` shows the flags; docs/kubernetes.md the setup.")
}

func runK8s(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		k8sUsage(stdout)
		if len(args) == 0 {
			return usageError{errors.New("no k8s subcommand (run, manifests, image)")}
		}
		return nil
	}
	switch args[0] {
	case "run":
		return k8sRun(args[1:], stdout, stderr, false)
	case "manifests":
		return k8sRun(args[1:], stdout, stderr, true)
	case "image":
		return k8sImage(args[1:])
	}
	k8sUsage(stderr)
	return usageError{fmt.Errorf("unknown k8s subcommand %q (run, manifests, image)", args[0])}
}

// k8sFlags are the flags of `k8s run` and `k8s manifests`.
type k8sFlags struct {
	image, syncImage, pullPolicy, namespace, out, hostPath, claim string
	kubectl, kubeconfig, kcontext, runID                          string
	cpu, memory, memoryLimit                                      string
	deadline                                                      time.Duration
	hostNetwork, keep, report                                     bool
	syncPort                                                      int
	sets                                                          setFlags
}

func k8sFlagSet(name string) (*flag.FlagSet, *k8sFlags) {
	fs := flag.NewFlagSet("k8s "+name, flag.ContinueOnError)
	f := &k8sFlags{sets: setFlags{}}
	defineK8sFlags(fs, f, false)
	return fs, f
}

// defineK8sFlags defines the cluster flags on fs. runStyle: fs is `streamsim run`'s flag set,
// whose -out and -set serve.
func defineK8sFlags(fs *flag.FlagSet, f *k8sFlags, runStyle bool) {
	if f.sets == nil {
		f.sets = setFlags{}
	}
	fs.StringVar(&f.image, "image", "streamsim-plan:dev", "plan image (a static plan binary at /plan; scripts/k8s.sh builds and loads it)")
	fs.StringVar(&f.syncImage, "sync-image", "streamsim-sync:dev", "sync service image (testground sync-service v0.1.0, patched to read SYNC_LISTEN_HOST/PORT)")
	fs.StringVar(&f.pullPolicy, "pull-policy", "Never", "image pull policy: Never (images loaded into the nodes' runtime), IfNotPresent or Always (a registry)")
	fs.StringVar(&f.namespace, "namespace", "streamsim", "namespace of the run's objects (created if missing)")
	if !runStyle {
		fs.StringVar(&f.out, "out", "", "local outputs directory (<group>/<instance>/); default out/k8s/<composition>-<run id>")
		fs.Var(f.sets, "set", "override a global test parameter name=value (repeatable)")
	}
	fs.StringVar(&f.hostPath, "outputs-host-path", "", "the node's directory for the outputs (hostPath); default: -out made absolute (this machine is the node)")
	fs.StringVar(&f.claim, "outputs-claim", "", "a ReadWriteMany PersistentVolumeClaim for the outputs instead of a host path (multi-node clusters); its contents are not copied back")
	fs.StringVar(&f.kubectl, "kubectl", "kubectl", "kubectl binary (a path or a name on PATH)")
	fs.StringVar(&f.kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig file (default $KUBECONFIG, else kubectl's default)")
	fs.StringVar(&f.kcontext, "context", "", "kubeconfig context (default: its current context)")
	fs.StringVar(&f.runID, "run-id", "", "run id (TEST_RUN, object names): lower-case letters, digits, '-', ≤20; default from the time")
	fs.StringVar(&f.cpu, "cpu", cluster.DefaultResources.CPU, "CPU request of each instance pod ([groups.resources] cpu overrides)")
	fs.StringVar(&f.memory, "memory", cluster.DefaultResources.Memory, "memory request of each instance pod ([groups.resources] memory overrides)")
	fs.StringVar(&f.memoryLimit, "memory-limit", cluster.DefaultResources.MemoryLimit, "memory limit of each instance pod (at least its request)")
	fs.DurationVar(&f.deadline, "deadline", 20*time.Minute, "the whole run's time budget; past it the pods are stopped and the run fails")
	fs.BoolVar(&f.hostNetwork, "host-network", false, "pods on the host network, instances on 127.0.0.1 with a port each (one-node clusters such as scripts/k8s.sh's); default: pod networking")
	fs.IntVar(&f.syncPort, "sync-port", 5050, "sync service port; with -host-network 0 picks a free loopback port here")
	fs.BoolVar(&f.keep, "keep", false, "leave the run's objects on the cluster")
	fs.BoolVar(&f.report, "report", true, "print the report of the collected outputs, as streamsim report does (its checks decide the exit status)")
}

// k8sRunStyle reads `streamsim k8s run --scenario …` with `streamsim run`'s flags (common
// parameters, the scenario's own flags, --set, --out) plus the cluster flags, into a Run.
func k8sRunStyle(args []string, stderr io.Writer) (*cluster.Run, *k8sFlags, error) {
	sc, err := runner.Lookup(scenarioArg(args))
	if err != nil {
		return nil, nil, usageError{fmt.Errorf("--scenario: %w", err)}
	}
	c := newRunCommand(sc)
	f := &k8sFlags{}
	defineK8sFlags(c.fs, f, true)
	c.fs.SetOutput(stderr)
	c.fs.Usage = func() {
		fmt.Fprintf(c.fs.Output(), "usage: streamsim k8s run --scenario %s [streamsim run's flags] [cluster flags]\n\nflags:\n", sc.Name)
		c.fs.PrintDefaults()
	}
	if err := parseFlags(c.fs, args); err != nil {
		return nil, nil, err
	}
	if c.fs.NArg() > 0 {
		return nil, nil, usageError{fmt.Errorf("unexpected arguments %q (a composition file or --scenario, not both)", c.fs.Args())}
	}
	if *c.cpuProfile != "" || *c.asJSON || *c.memLimit != "" {
		return nil, nil, usageError{errors.New("--cpuprofile, --heap-limit and --json are streamsim run's; on a cluster each pod has its own --memory-limit and the report is streamsim report's")}
	}
	if c.own == nil {
		return nil, nil, fmt.Errorf("scenario %s declares no run flags (runner.Scenario.Flags)", sc.Name)
	}
	params := map[string]string{}
	for name, pf := range c.params {
		if pf.value != "" { // unset (--clock): the instances take the parameter's default
			params[name] = pf.value
		}
	}
	for k, v := range c.sets {
		params[k] = v
	}
	runs, err := c.own.Runs(params)
	if err != nil {
		return nil, nil, usageError{err}
	}
	if len(runs) != 1 {
		return nil, nil, usageError{fmt.Errorf("the flags ask for %d runs (a comparison); streamsim k8s makes one run: give one codec, seed and bandwidth", len(runs))}
	}
	r := &cluster.Run{Name: sc.Name, Plan: "streamsim", Case: sc.Name, Params: runs[0].Params}
	for _, g := range runs[0].Groups {
		r.Groups = append(r.Groups, cluster.Group{ID: g.ID, Instances: g.Instances, Params: g.Params})
	}
	f.out = *c.out
	return r, f, nil
}

func k8sRun(args []string, stdout, stderr io.Writer, manifestsOnly bool) error {
	name := "run"
	if manifestsOnly {
		name = "manifests"
	}
	var r *cluster.Run
	var f *k8sFlags
	var err error
	if scenarioArg(args) != "" {
		if r, f, err = k8sRunStyle(args, stderr); err != nil {
			return err
		}
	} else {
		var fs *flag.FlagSet
		fs, f = k8sFlagSet(name)
		fs.SetOutput(stderr)
		fs.Usage = func() {
			fmt.Fprintf(fs.Output(), "usage: streamsim k8s %s [flags] <composition.toml>\n       streamsim k8s %s --scenario <name> [streamsim run's flags] [flags]\n\nflags:\n", name, name)
			fs.PrintDefaults()
		}
		if err := parseFlags(fs, args); err != nil {
			return err
		}
		if fs.NArg() != 1 {
			fs.Usage()
			return usageError{errors.New("want exactly one composition file (or --scenario and streamsim run's flags)")}
		}
		if r, err = cluster.ReadComposition(fs.Arg(0)); err != nil {
			return usageError{err}
		}
		for k, v := range f.sets {
			r.Params[k] = v
		}
		if r.Name == "" {
			r.Name = strings.TrimSuffix(filepath.Base(fs.Arg(0)), ".toml")
		}
	}
	r.ID = f.runID
	if r.ID == "" {
		r.ID = "r" + time.Now().UTC().Format("0102-150405")
	}
	r.Namespace, r.Image, r.SyncImage, r.PullPolicy = f.namespace, f.image, f.syncImage, f.pullPolicy
	r.HostNetwork, r.SyncPort, r.Deadline, r.Started = f.hostNetwork, f.syncPort, f.deadline, time.Now()
	r.Defaults = cluster.Resources{CPU: f.cpu, Memory: f.memory, MemoryLimit: f.memoryLimit}
	out := f.out
	if out == "" {
		out = filepath.Join("out", "k8s", r.Name+"-"+r.ID)
	}
	if out, err = filepath.Abs(out); err != nil {
		return err
	}
	switch {
	case f.claim != "" && f.hostPath != "":
		return usageError{errors.New("-outputs-host-path and -outputs-claim: set one")}
	case f.claim != "":
		r.OutputsClaim = f.claim
	case f.hostPath != "":
		r.OutputsHostPath = f.hostPath
	default:
		r.OutputsHostPath = out
	}
	if r.SyncPort == 0 && r.HostNetwork {
		if r.SyncPort, err = freeLoopbackPort(); err != nil {
			return err
		}
	}
	if err := r.Validate(); err != nil {
		return usageError{err}
	}
	if manifestsOnly {
		b, err := cluster.MarshalList(r.Manifests())
		if err != nil {
			return err
		}
		_, err = stdout.Write(b)
		return err
	}
	kc, err := cluster.NewKubectl(f.kubectl, f.kubeconfig, f.kcontext)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Fprintf(stderr, "outputs: %s\n", out)
	_, runErr := cluster.Execute(ctx, kc, r, cluster.Options{Out: out, Progress: stderr})
	if !f.report || r.OutputsClaim != "" {
		return runErr
	}
	if sums, _ := filepath.Glob(filepath.Join(out, "*", "*", "summary.json")); len(sums) == 0 {
		if runErr != nil {
			return runErr
		}
		return fmt.Errorf("no instance wrote a summary under %s", out)
	}
	repErr := runReport([]string{out}, stdout)
	if runErr != nil {
		return runErr
	}
	return repErr
}

// freeLoopbackPort is a port nothing on 127.0.0.1 holds now (for the host-network sync
// service: sync-service v0.1.0's 5050 may be another run's on a shared machine).
func freeLoopbackPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free loopback port for the sync service: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func k8sImage(args []string) error {
	fs := flag.NewFlagSet("k8s image", flag.ContinueOnError)
	out := fs.String("o", "", "archive to write (Docker image archive: ctr -n k8s.io images import, docker load)")
	ref := fs.String("ref", "", "image name and tag, e.g. streamsim-plan:dev")
	binary := fs.String("binary", "", "static binary that becomes the image's only file and entrypoint")
	entry := fs.String("entry", "plan", "the binary's name in the image (/<entry>)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *out == "" || *ref == "" || *binary == "" || fs.NArg() > 0 {
		return usageError{errors.New("-o, -ref and -binary are required (and no arguments)")}
	}
	if strings.Contains(*entry, "/") || *entry == "" {
		return usageError{fmt.Errorf("-entry %q: want a file name", *entry)}
	}
	return cluster.WriteArchiveFile(*out, *ref, *binary, *entry)
}
