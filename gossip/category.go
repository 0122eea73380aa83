package gossip

import (
	"fmt"
	"strings"
)

// Category is the measurement category of a message or of part of an RPC frame
// (docs/results-schema.md, "Measurement definitions").
type Category uint8

const (
	Attestation Category = iota
	Aggregate
	Block
	DataColumn
	SyncCommittee
	Control
	Other
	// NumCategories is the number of categories; arrays indexed by Category use it.
	NumCategories
)

var categoryNames = [NumCategories]string{
	Attestation:   "attestation",
	Aggregate:     "aggregate",
	Block:         "block",
	DataColumn:    "data_column",
	SyncCommittee: "sync_committee",
	Control:       "control",
	Other:         "other",
}

// Categories lists every category in report order.
func Categories() []Category {
	out := make([]Category, NumCategories)
	for i := range out {
		out[i] = Category(i)
	}
	return out
}

func (c Category) String() string {
	if c < NumCategories {
		return categoryNames[c]
	}
	return fmt.Sprintf("category(%d)", uint8(c))
}

// MarshalText makes categories JSON map keys and values by name.
func (c Category) MarshalText() ([]byte, error) {
	if c >= NumCategories {
		return nil, fmt.Errorf("invalid category %d", uint8(c))
	}
	return []byte(categoryNames[c]), nil
}

// UnmarshalText parses a category name.
func (c *Category) UnmarshalText(b []byte) error {
	v, err := ParseCategory(string(b))
	if err != nil {
		return err
	}
	*c = v
	return nil
}

// ParseCategory returns the category with the given name.
func ParseCategory(name string) (Category, error) {
	for i, n := range categoryNames {
		if n == name {
			return Category(i), nil
		}
	}
	return 0, fmt.Errorf("unknown category %q (allowed: %s)", name, strings.Join(categoryNames[:], ", "))
}
