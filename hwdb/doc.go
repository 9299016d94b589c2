// Package hwdb is the GPU database: datasheet figures for each GPU, every
// figure with its source, embedded in the binary, plus user-supplied spec
// files (for measured ceilings or GPUs not in the table).
package hwdb
