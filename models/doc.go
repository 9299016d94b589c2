// Package models is onnxcost's reference model zoo: parametric AlexNet,
// VGG, ResNet, an LSTM language model, a Transformer encoder and GPT- and
// LLaMA-style decoders, built directly as ir graphs (no Python, no weights)
// so that users can cost a model they do not have as a file ("a 70B LLaMA
// on an H100 at batch 8, seq 2048") and tests can reach shapes no fixture
// covers.
//
// Every builder returns a model the way a PyTorch export at opset 17 would
// look: nodes named by module path ("/layers.3/attn/MatMul"), weights as
// initializers with dims and dtype but no bytes (external data whose file
// is absent, as in the committed graph-only fixtures), small shape
// constants as Constant nodes with real values, and every shape inferred.
package models
