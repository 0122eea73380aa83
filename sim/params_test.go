package sim

import (
	"strings"
	"testing"
)

func TestParseParams(t *testing.T) {
	p, err := ParseParams(nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Codec.String() != "plain" || p.Profile.Name != "all-subnets" || p.Slots != DefaultSlots ||
		p.TimeScale != DefaultTimeScale || p.Payload != "ssz_snappy" || p.Seed != 1 || p.Record || p.Publishers != 4 ||
		p.Validators != 1_000_000 {
		t.Fatalf("defaults %+v", p)
	}
	p, err = ParseParams(map[string]string{ParamCodec: "zstd:7", ParamProfile: "default", ParamSlots: "3",
		ParamTimeScale: "2.5", ParamPayload: "ssz", ParamSeed: "-4", ParamRecord: "true", ParamPublishers: "2", ParamValidators: "64000"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Codec.String() != "zstd:7" || p.Profile.Name != "default" || p.Slots != 3 || p.TimeScale != 2.5 ||
		p.Payload != "ssz" || p.Seed != -4 || !p.Record || p.Publishers != 2 || p.Workload().Validators != 64000 || p.Workload().Seed != -4 {
		t.Fatalf("parsed %+v", p)
	}
	for k, v := range map[string]string{
		ParamCodec: "brotli", ParamProfile: "everything", ParamSlots: "0", ParamTimeScale: "-1",
		ParamPayload: "json", ParamSeed: "one", ParamRecord: "maybe", ParamPublishers: "0", ParamValidators: "x",
	} {
		if _, err := ParseParams(map[string]string{k: v}); err == nil || !strings.Contains(err.Error(), "param "+k) {
			t.Errorf("%s=%s: error %v does not name the parameter", k, v, err)
		}
	}
}
