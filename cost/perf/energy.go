package perf

// memoryActivity is the dynamic power of a kernel streaming DRAM at full
// bandwidth, at boost clock, as a fraction of TDP − idle, on a board
// without a measured energy per byte (hwdb mem_pj_per_byte; see
// power.go). Memory-bound work keeps the memory system busy but the SMs
// mostly wait, so it draws less than dense compute: 0.6 is an assumption
// in line with CARLA 2018's observation that capping SM clocks does not
// slow memory-bound work, not a measured figure. On the HBM boards that
// have readings it was off both ways (A100-40GB +18%, H200 −20%), which
// is why they take the per-byte figure.
const memoryActivity = 0.6

// IdleFraction is the idle power assumed, as a fraction of TDP, when the
// GPU record has no IdleWatts (an assumption; datasheets rarely give it).
const IdleFraction = 0.2
