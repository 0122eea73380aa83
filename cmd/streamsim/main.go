// Command streamsim simulates Ethereum consensus gossip over real libp2p nodes and measures
// what stream compression does to bandwidth and CPU.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
)

// command is one subcommand; each lives in its own file and registers itself in init.
type command struct {
	summary string
	run     func(args []string) error
}

var commands = map[string]command{}

func register(name, summary string, run func(args []string) error) {
	commands[name] = command{summary: summary, run: run}
}

// defaultCommand runs when streamsim is called with no subcommand or with flags only.
const defaultCommand = "run"

func main() {
	args := os.Args[1:]
	name := defaultCommand
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	if name == "help" {
		usage(os.Stdout)
		return
	}
	cmd, ok := commands[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "streamsim: unknown command %q\n\n", name)
		usage(os.Stderr)
		os.Exit(2)
	}
	if err := cmd.run(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		var ue usageError
		if errors.As(err, &ue) {
			fmt.Fprintf(os.Stderr, "streamsim %s: %v\n", name, err)
			os.Exit(2)
		}
		fmt.Fprintf(os.Stderr, "streamsim %s: %v\n", name, err)
		os.Exit(1)
	}
}

// usageError marks a bad flag or argument: exit status 2 instead of 1.
type usageError struct{ error }

// parseFlags parses a subcommand's flags; a bad flag is a usageError, -h is flag.ErrHelp.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	return nil
}

func usage(w *os.File) {
	fmt.Fprintln(w, "usage: streamsim [command] [flags]   (no command: run)")
	fmt.Fprintln(w, "\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nstreamsim <command> -h shows a command's flags.")
}
