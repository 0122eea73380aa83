package runner

import "encoding/json"

// The sync service decodes every published payload into an interface{} and encodes it again,
// so each JSON number passes through a float64: integers above 2^53, such as the parity
// digests' uint64 lanes, come back changed. A resultRecord therefore travels as one JSON
// string holding its JSON, which the service passes through untouched. (The in-memory sync
// client of the embedded runner does not re-encode, which is why only Testground runs see it.)

// MarshalJSON encodes the record as a JSON string of its JSON.
func (r *resultRecord) MarshalJSON() ([]byte, error) {
	type bare resultRecord
	inner, err := json.Marshal((*bare)(r))
	if err != nil {
		return nil, err
	}
	return json.Marshal(string(inner))
}

// UnmarshalJSON decodes what MarshalJSON encodes.
func (r *resultRecord) UnmarshalJSON(b []byte) error {
	type bare resultRecord
	var inner string
	if err := json.Unmarshal(b, &inner); err != nil {
		return err
	}
	return json.Unmarshal([]byte(inner), (*bare)(r))
}
