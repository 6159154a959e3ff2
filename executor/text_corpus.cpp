#include "executor/text_corpus.hpp"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "core/error.hpp"
#include "core/input_file.hpp"

namespace pipesim {
namespace {

inline constexpr InputKind kCorpusInput{"text corpus", 1024 * kMiB};

// Length of the well-formed UTF-8 sequence at text[i] (1 for ASCII), or 0: core/error.hpp's
// printable sequences, plus the C1 controls (U+0080..U+009F, C2 80..C2 9F), which are text
// too (one_line escapes them in messages); no lead byte above F4.
std::size_t utf8_length(const std::string& text, std::size_t i) {
  const auto lead = static_cast<unsigned char>(text[i]);
  if (lead < 0x80) return 1;
  if (lead == 0xc2 && i + 1 < text.size() && (static_cast<unsigned char>(text[i + 1]) & 0xe0) == 0x80) return 2;
  return lead > 0xf4 ? 0 : utf8_printable(text, i);
}

// "line 3, byte 17" (1-based line, 0-based byte offset) of text[i].
std::string where(const std::string& text, std::size_t i) {
  const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(i), '\n');
  return "line " + std::to_string(line) + ", byte " + std::to_string(i);
}

std::string read_fortunes() {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<fs::path> files;
  for (fs::directory_iterator it(kFortunesDir, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file(ec) && !it->is_symlink(ec) && !it->path().has_extension()) files.push_back(it->path());
  if (files.empty())
    throw InputError(std::string("--data fortunes: no fortune files in ") + quote(kFortunesDir) +
                     " (install the Debian packages fortunes and fortunes-min: tools/bootstrap.sh)");
  std::sort(files.begin(), files.end());
  std::string text;
  for (const fs::path& f : files) text += read_input_file(f.string(), kCorpusInput);
  return text;
}

}  // namespace

TextCorpus make_text_corpus(const std::string& name, const std::string& text) {
  const std::string who = "--data " + quote(name) + ": ";
  if (text.empty()) throw InputError(who + "the file is empty; expected UTF-8 text");
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] == '\0') throw InputError(who + "a NUL byte at " + where(text, i) + ": a binary file, expected UTF-8 text");
    const std::size_t n = utf8_length(text, i);
    if (n == 0)
      throw InputError(who + "bytes that are not UTF-8 at " + where(text, i) + ": a binary file, expected UTF-8 text");
    i += n;
  }
  TextCorpus c;
  c.name = name;
  const std::size_t validation = text.size() / 10;
  const auto split = static_cast<std::ptrdiff_t>(text.size() - validation);
  c.train.assign(text.begin(), text.begin() + split);
  c.validation.assign(text.begin() + split, text.end());
  return c;
}

std::shared_ptr<const TextCorpus> load_text_corpus(const std::string& path) {
  if (path == "fortunes") return std::make_shared<const TextCorpus>(make_text_corpus(path, read_fortunes()));
  std::string text;
  try {
    text = read_input_file(path, kCorpusInput);
  } catch (const InputError& e) {
    throw InputError(std::string("--data: ") + e.what());
  }
  return std::make_shared<const TextCorpus>(make_text_corpus(path, text));
}

void check_corpus_fits(const TextCorpus& c, const ModelSpec& model) {
  const std::string who = "--data " + quote(c.name) + ": ";
  if (model.vocab < kByteVocabulary)
    throw InputError(who + "byte-level tokens need a vocabulary of at least 256; model " + quote(model.name) + " has " +
                     std::to_string(model.vocab));
  const auto window = static_cast<std::uint64_t>(model.seq_len) + 1;
  if (c.validation.size() < window)
    throw InputError(who + std::to_string(c.bytes()) + " bytes leave the validation split (the last 10 %) " +
                     std::to_string(c.validation.size()) + " tokens, fewer than one sequence of model " +
                     quote(model.name) + " (seq_len " + std::to_string(model.seq_len) +
                     " + 1 target); give at least " + std::to_string(10 * window) + " bytes");
}

MicrobatchData corpus_microbatch(const TextCorpus& c, std::uint64_t seed, int microbatch, int sequences, int seq_len) {
  PIPESIM_ASSERT(c.train.size() > static_cast<std::size_t>(seq_len));
  MicrobatchData d;
  const auto s = static_cast<std::size_t>(seq_len);
  const std::uint64_t starts = c.train.size() - s;
  d.ids.reserve(static_cast<std::size_t>(sequences) * s);
  d.targets.reserve(static_cast<std::size_t>(sequences) * s);
  for (int j = 0; j < sequences; ++j) {
    std::uint64_t state = sequence_state(seed, microbatch, j);
    const auto at = static_cast<std::size_t>(splitmix64(state) % starts);
    for (std::size_t i = 0; i < s; ++i) {
      d.ids.push_back(c.train[at + i]);
      d.targets.push_back(c.train[at + i + 1]);
    }
  }
  return d;
}

std::vector<MicrobatchData> corpus_validation(const TextCorpus& c, int windows, int sequences, int seq_len) {
  const auto s = static_cast<std::size_t>(seq_len);
  PIPESIM_ASSERT(sequences > 0 && windows > 0 && c.validation.size() > s);
  const int count = (windows + sequences - 1) / sequences * sequences;
  const std::size_t last_start = c.validation.size() - s - 1;
  std::vector<MicrobatchData> out;
  for (int k = 0; k < count; ++k) {
    if (k % sequences == 0) out.emplace_back();
    const std::size_t at = count == 1 ? 0 : last_start * static_cast<std::size_t>(k) / static_cast<std::size_t>(count - 1);
    for (std::size_t i = 0; i < s; ++i) {
      out.back().ids.push_back(c.validation[at + i]);
      out.back().targets.push_back(c.validation[at + i + 1]);
    }
  }
  return out;
}

}  // namespace pipesim
