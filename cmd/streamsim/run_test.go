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
