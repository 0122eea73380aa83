package main

import (
	"errors"
	"strings"
	"testing"
)

func TestRunFlagErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--time-scale", "0"}, {"--slots", "0"}, {"--leaves", "plain,brotli"}, {"--profile", "everything"},
		{"--payload", "json"}, {"--publishers", "0"}, {"--validators", "8"}, {"--bogus"}, {"extra"},
		{"--heap-limit", "8GB"}, {"--heap-limit", "0"},
	} {
		err := runRunCmd(args)
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("%v: %v is not a usage error", args, err)
			continue
		}
		if strings.HasPrefix(args[0], "--") && args[0] != "--bogus" && !strings.Contains(err.Error(), args[0]) {
			t.Errorf("%v: error %q does not name the flag", args, err)
		}
	}
}

// Bad mesh flags and parameters are usage errors naming what to change, before any node
// starts.
func TestRunMeshFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--scenario", "ring"}, "--scenario"},
		{[]string{"--scenario", "mesh", "--nodes", "2"}, "--nodes"},
		{[]string{"--scenario", "mesh", "--codecs", "brotli"}, "--codecs"},
		{[]string{"--scenario", "mesh", "--seeds", "1,x"}, "--seeds"},
		{[]string{"--scenario", "mesh", "--bandwidths", "fast"}, "--bandwidths"},
		{[]string{"--scenario", "mesh", "--set", "clients=geth:1"}, "clients"},
		{[]string{"--scenario", "mesh", "--clock", "real", "--set", "links=true"}, "time_scale 1"},
		{[]string{"--scenario", "mesh", "--set", "queue=0"}, "--set queue"},
		{[]string{"--scenario", "mesh", "--nodes", "5"}, "degree"},
		{[]string{"--scenario", "mesh", "--nodes", "6", "--set", "degree=3", "--set", "observed_peers=5", "--set", "mix=default:1"}, "mix"},
		{[]string{"--scenario", "mesh", "--clock", "real", "--codecs", "plain,zstd", "--bandwidths", "10Mbit"}, "time_scale 1"},
		{[]string{"--scenario", "mesh", "--clock", "sim"}, "--clock"},
		{[]string{"--scenario", "mesh", "--clock", "virtual", "--time-scale", "2"}, "--time-scale 2: means nothing with --clock virtual"},
		{[]string{"--scenario", "mesh", "--clock", "virtual", "--set", "time_scale=2"}, "--set time_scale=2: means nothing with --clock virtual"},
		{[]string{"--scenario", "hub-leaves", "--clock", "virtual"}, "--clock: scenario hub-leaves runs on the real clock only (virtual: mesh, neighbourhood)"},
	} {
		err := runRunCmd(c.args)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want a usage error mentioning %q", c.args, err, c.want)
		}
	}
}

// The run's memory limit: --heap-limit's value, else the smaller of 8 GiB and three
// quarters of what the machine has available (8 GiB where that is unknown).
func TestRunMemoryLimit(t *testing.T) {
	for _, c := range []struct {
		flag  string
		avail int64
		want  int64
	}{
		{"", 0, 8 << 30},
		{"", 32 << 30, 8 << 30},
		{"", 8 << 30, 6 << 30},
		{"12GiB", 8 << 30, 12 << 30},
		{"512MiB", 32 << 30, 512 << 20},
	} {
		got, err := runMemoryLimit(c.flag, c.avail)
		if err != nil || got != c.want {
			t.Errorf("runMemoryLimit(%q, %d) = %d, %v; want %d", c.flag, c.avail, got, err, c.want)
		}
	}
	if _, err := runMemoryLimit("lots", 0); err == nil || !strings.Contains(err.Error(), "8GiB") {
		t.Errorf("a bad limit: error %v, want one naming the forms", err)
	}
}
