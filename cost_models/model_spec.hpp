#pragma once
// ModelSpec: the shape of a transformer, as the catalogs list it (cost_models/catalogs/).
#include <cstdint>
#include <string>

namespace pipesim {

enum class MlpKind : std::uint8_t {
  Gelu,    // two matrices h -> ffn -> h (GPT, BERT)
  SwiGlu,  // three matrices: gate and up h -> ffn, down ffn -> h (Llama)
};

struct ModelSpec {
  std::string name;         // catalog key, e.g. "gpt3-13b"
  std::string family;       // "gpt", "llama", "bert"
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;         // grouped-query attention; = heads for multi-head attention
  int head_dim = 0;         // 0 = hidden / heads; GPT-3 13B has 40 x 128 = 5120 with hidden 5140
  int ffn_hidden = 0;
  int seq_len = 0;
  int vocab = 0;
  bool tied_embeddings = true;  // LM head shares the input embedding
  MlpKind mlp = MlpKind::Gelu;
  // Architecture details that move parameter counts by well under 1% but keep them exact
  // (cost_models/transformer.hpp): GPT/BERT have biases, LayerNorm (weight and bias) and
  // learned position embeddings; Llama has no biases, RMSNorm (weight only) and RoPE.
  bool linear_bias = true;        // every linear layer has a bias vector
  bool rms_norm = false;          // RMSNorm (h parameters) instead of LayerNorm (2h)
  bool learned_positions = true;  // a seq_len x hidden position-embedding table
  std::string source;       // where the numbers come from (paper, model card)
};

}  // namespace pipesim
