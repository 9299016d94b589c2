// Package hwdb is the GPU database: datasheet figures for each GPU, every
// figure with its source, embedded in the binary, plus user-supplied spec
// files (for measured ceilings or GPUs not in the table).
//
// # Files
//
//   - gpus.yaml: the built-in table, every figure with its source.
//   - gpu.go: GPU, Precision and the per-precision peaks.
//   - load.go: YAML loading with positioned errors, base: merging of user
//     files, and the source check for built-in data.
//   - db.go: lookup by name and alias; format.go: the table printed by
//     `onnxcost gpus`.
package hwdb
