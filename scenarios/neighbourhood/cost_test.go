package neighbourhood

import (
	"testing"
	"time"
)

// What a simulated minute cost counts the whole run's simulated time (warm-up, measured slots
// and the settling slot), and the summary carries it.
func TestCostPerSimulatedMinute(t *testing.T) {
	r := &Report{Config: Config{Warmup: 2, Slots: 2}, Wall: 150 * time.Second, CPU: 300 * time.Second}
	// 2 + 2 + 1 slots of 12 s: one simulated minute.
	if wall, cpu := r.costPerSimMinute(); wall != 150 || cpu != 300 {
		t.Fatalf("cost per simulated minute: wall %v s, CPU %v s; want 150 and 300", wall, cpu)
	}
	r.Config.Slots = 7 // two simulated minutes
	if wall, cpu := r.costPerSimMinute(); wall != 75 || cpu != 150 {
		t.Fatalf("over two simulated minutes: wall %v s, CPU %v s; want 75 and 150", wall, cpu)
	}
}
