package models

import "testing"

// BenchmarkSynthetic10k measures building (and inferring) the 10,000-node
// benchmark graph.
func BenchmarkSynthetic10k(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := Synthetic(10000); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLlama70B measures building the 80-layer 70B decoder.
func BenchmarkLlama70B(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := Llama(Llama70B); err != nil {
			b.Fatal(err)
		}
	}
}
