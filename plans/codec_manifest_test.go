package main

import (
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/sim/runner"
)

// TestManifestCodecDescription: every test case's codec parameter in manifest.toml carries
// the description codec's family table gives (codec.ParamDescription), so that a new codec
// family shows in Testground's help the day it is added.
func TestManifestCodecDescription(t *testing.T) {
	var m struct {
		TestCases []struct {
			Name   string
			Params map[string]struct {
				Desc string `toml:"desc"`
			} `toml:"params"`
		} `toml:"testcases"`
	}
	if _, err := toml.DecodeFile("../manifest.toml", &m); err != nil {
		t.Fatal(err)
	}
	if len(m.TestCases) == 0 {
		t.Fatal("manifest.toml has no test cases")
	}
	want := codec.ParamDescription()
	for _, tc := range m.TestCases {
		p, ok := tc.Params[runner.ParamCodec]
		if !ok {
			t.Errorf("%s: no %s parameter", tc.Name, runner.ParamCodec)
			continue
		}
		if p.Desc != want {
			t.Errorf("%s: %s description\n%q\nwant codec.ParamDescription()\n%q", tc.Name, runner.ParamCodec, p.Desc, want)
		}
	}
}
