package topology

import (
	"reflect"
	"testing"
)

func TestParseMeshParams(t *testing.T) {
	p, err := ParseMeshParams(map[string]string{"seed": "5", "unrelated": "x", ParamDegree: " "})
	if err != nil || !reflect.DeepEqual(p, DefaultMeshParams()) {
		t.Fatalf("empty and unrelated params: %+v, %v; want the defaults", p, err)
	}
	p, err = ParseMeshParams(map[string]string{
		ParamTopologySeed: "-3", ParamDegree: "10", ParamObservedPeers: "30", ParamObservedClient: "prysm",
		ParamMix: "default:0.5, all-subnets:0.3,supernode:0.2", ParamClients: "nimbus:1",
		ParamCompressedShare: "0.5", ParamCodec: "zstd:7",
	})
	if err != nil {
		t.Fatal(err)
	}
	if p.Seed != -3 || p.Degree != 10 || p.ObservedPeers != 30 || p.ObservedClient != "prysm" ||
		!reflect.DeepEqual(p.Mix, map[string]float64{KindDefault: 0.5, KindAllSubnets: 0.3, KindSupernode: 0.2}) ||
		!reflect.DeepEqual(p.Clients, map[string]float64{"nimbus": 1}) || p.CompressedShare != 0.5 || p.Codec.String() != "zstd:7" {
		t.Errorf("parsed %+v", p)
	}
}
