package hubleaves_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/streamsim/streamsim/scenarios/hubleaves"

	"github.com/streamsim/streamsim/sim/runner"

	"github.com/streamsim/streamsim/workload"
)

func TestParseParams(t *testing.T) {
	p, err := hubleaves.HubLeaves.ParseParams(nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Codec.String() != "plain" || p.Profile.Name != "all-subnets" || p.Slots != runner.DefaultSlots ||
		p.TimeScale != runner.DefaultTimeScale || p.Payload != "ssz_snappy" || p.Seed != 1 || p.Record || p.Values[hubleaves.ParamPublishers] != "4" ||
		p.Validators != 1_000_000 {
		t.Fatalf("defaults %+v", p)
	}
	p, err = hubleaves.HubLeaves.ParseParams(map[string]string{runner.ParamCodec: "zstd:7", runner.ParamProfile: "default", runner.ParamSlots: "3",
		runner.ParamTimeScale: "2.5", runner.ParamPayload: "ssz", runner.ParamSeed: "-4", runner.ParamRecord: "true", hubleaves.ParamPublishers: "2", runner.ParamValidators: "64000"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Codec.String() != "zstd:7" || p.Profile.Name != "default" || p.Slots != 3 || p.TimeScale != 2.5 ||
		p.Payload != "ssz" || p.Seed != -4 || !p.Record || p.Values[hubleaves.ParamPublishers] != "2" || p.Workload().Validators != 64000 || p.Workload().Seed != -4 {
		t.Fatalf("parsed %+v", p)
	}
	for k, v := range map[string]string{
		runner.ParamCodec: "brotli", runner.ParamProfile: "everything", runner.ParamSlots: "0", runner.ParamTimeScale: "-1",
		runner.ParamPayload: "json", runner.ParamSeed: "one", runner.ParamRecord: "maybe", hubleaves.ParamPublishers: "0", runner.ParamValidators: "x",
	} {
		p, err := hubleaves.HubLeaves.ParseParams(map[string]string{k: v})
		if err == nil && k == hubleaves.ParamPublishers {
			err = hubleaves.HubLeaves.Check(p, map[string]int{})
		}
		var pe *runner.ParamError
		if err == nil || !strings.Contains(err.Error(), "param "+k) || !errors.As(err, &pe) || pe.Name != k {
			t.Errorf("%s=%s: error %v does not name the parameter", k, v, err)
		}
	}
}

// The workload owns the validators rule; every entry point reports its message.
func TestValidatorsRuleIsTheWorkloads(t *testing.T) {
	_, err := hubleaves.HubLeaves.ParseParams(map[string]string{runner.ParamValidators: "31"})
	wp := workload.DefaultParams()
	wp.Validators = 31
	werr := wp.Validate()
	if err == nil || werr == nil || !strings.HasSuffix(err.Error(), werr.Error()) {
		t.Fatalf("param error %v, workload error %v", err, werr)
	}
	if _, err := hubleaves.HubLeaves.ParseParams(map[string]string{"validator": "10"}); err == nil || !strings.Contains(err.Error(), "unknown") {
		t.Fatalf("misspelt parameter: %v", err)
	}
}
