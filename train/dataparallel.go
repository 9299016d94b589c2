package train

import (
	"fmt"
	"math"

	"github.com/onnxcost/onnxcost/cost"
)

// Data parallelism (Options.DataParallel = n > 1), as PyTorch's
// DistributedDataParallel runs it: n replicas, each training on its own
// micro-batch of the graph's batch (the effective batch is n × batch ×
// the accumulation count), and one all-reduce of every parameter gradient
// per optimizer step (DDP skips it on the accumulation micro-batches under
// no_sync). The report is one replica's.
//
//   - Gradients are all-reduced in buckets of ddpBucketBytes (DDP's
//     default bucket_cap_mb = 25), each an all-reduce priced as the
//     tensor-parallel one (cost.AllReduceTime), its latency
//     (cost.AllReduceLatencyS) paid per bucket.
//   - DDP launches a bucket's all-reduce as soon as backward has produced
//     its gradients, so communication overlaps the backward: the exposed
//     time is what the all-reduces take beyond the backward, plus the
//     last bucket, which can start only when backward ends.
//   - Memory: DDP keeps its buckets, a flat copy of every gradient
//     (gradient_as_bucket_view=False, the default), for the run.
//   - Under tensor parallelism (--gpus) the replica is the tensor-parallel
//     group and its gradients are one GPU's share.
const ddpBucketBytes = 25 << 20

// dataParallel prices the gradient all-reduce; gradBytes is one GPU's
// parameter gradients.
func (s *step) dataParallel(n int, gradBytes float64) error {
	tr, gpu := s.tr, s.f.GPU()
	bw := gpu.PeerBW(n)
	if bw <= 0 {
		return fmt.Errorf("analyze: data parallel over %d GPUs: GPU %s has no NVLink or PCIe bandwidth in its hwdb entry to cost the gradient all-reduce with", n, gpu.Name)
	}
	lat := cost.AllReduceLatencyS(gpu, n)
	buckets := math.Max(math.Ceil(gradBytes/ddpBucketBytes), 1)
	comm := cost.AllReduceTime(gpu, n, gradBytes) + (buckets-1)*lat
	last := cost.AllReduceTime(gpu, n, math.Min(gradBytes, ddpBucketBytes))
	tr.DataParallel = n
	tr.GradAllReduceS = comm
	tr.GradAllReduceExposedS = math.Max(comm-last-tr.BackwardTimeS, 0) + last
	tr.Notes = append(tr.Notes, fmt.Sprintf("data parallel over %d GPUs (DistributedDataParallel): %.0f gradient buckets of 25 MiB all-reduced over %.4g GB/s (ring, %.3g µs each, fitted to NCCL timings), %s in all, %s of it not hidden behind the backward; effective batch %d × the graph's batch per micro-batch; see train/dataparallel.go",
		n, buckets, bw/1e9, lat*1e6, cost.USText(comm), cost.USText(tr.GradAllReduceExposedS), n))
	return nil
}

// gradientBytes is one GPU's parameter gradients at the compute dtype.
func (s *step) gradientBytes() float64 {
	c := s.f.Sizer()
	var b float64
	for _, v := range s.trainable {
		b += s.f.ParamShare(v) * c.Bytes(v)
	}
	return b
}
