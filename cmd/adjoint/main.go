// Command adjoint is the command-line front end of the adjoint automatic
// differentiation library.
//
// Usage:
//
//	adjoint <command> [arguments]
//
// Run "adjoint help" for the list of commands. Each command lives in its own
// file of this package and registers itself in the commands table below.
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
)

// version is the release of the library this binary was built from.
const version = "0.1.0-dev"

// command is one subcommand: its name, a one-line summary and its entry point.
// run receives the arguments after the command name and returns the process
// exit status.
type command struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

// commands is filled by the init functions of the files that define them, so
// that adding a subcommand touches only its own file.
var commands = map[string]command{}

func register(c command) { commands[c.name] = c }

func init() {
	register(command{name: "version", summary: "print the version of adjoint", run: runVersion})
	register(command{name: "help", summary: "list the commands, or describe one: adjoint help <command>", run: runHelp})
}

func main() {
	code := dispatch(os.Args[1:], os.Stdout, os.Stderr)
	if err := closeWorld(); err != nil && code == exitOK {
		fmt.Fprintln(os.Stderr, "adjoint:", err)
		code = exitFailure
	}
	os.Exit(code)
}

func dispatch(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	name := args[0]
	if name == "-h" || name == "--help" || name == "-help" {
		name = "help"
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "adjoint: unknown command %q; run \"adjoint help\" for the list\n", args[0])
		return exitUsage
	}
	return c.run(args[1:], stdout, stderr)
}

func runVersion(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintf(stdout, "adjoint %s\n", version)
	return exitOK
}

// runHelp lists the commands, or prints one command's description and,
// for the commands that take flags, its usage and flags (what "adjoint
// CMD -h" prints, written to stdout).
func runHelp(args []string, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 0:
		usage(stdout)
		return exitOK
	case len(args) > 1:
		fmt.Fprintf(stderr, "adjoint help: one command at a time, e.g. \"adjoint help train\" (got %d arguments)\n", len(args))
		return exitUsage
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "adjoint: unknown command %q; run \"adjoint help\" for the list\n", args[0])
		return exitUsage
	}
	switch c.name {
	case "help":
		fmt.Fprintf(stdout, "Usage: adjoint help [command]\n\nWithout a command, lists the commands; with one, describes it and prints its flags.\n")
	case "version":
		fmt.Fprintf(stdout, "Usage: adjoint version\n\nPrints the version of adjoint (%s). It takes no flags.\n", version)
	default:
		fmt.Fprintf(stdout, "adjoint %s: %s\n\n", c.name, c.summary)
		c.run([]string{"-h"}, stdout, stdout) // its usage and flags
	}
	return exitOK
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "adjoint %s: reverse-mode automatic differentiation for Go\n\nUsage: adjoint <command> [arguments]\n\nCommands:\n", version)
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintf(w, "\nExit status: %d on success, %d when the work failed (an unreadable file, a diverged\nrun), %d when the command line is refused; every flag is checked before any work.\n",
		exitOK, exitFailure, exitUsage)
}
