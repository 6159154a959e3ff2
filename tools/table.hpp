#pragma once
// Table: aligned plain-text tables for people. Text columns align left, numbers right.
#include <string>
#include <vector>

namespace pipesim {

class Table {
 public:
  enum class Align { Left, Right };
  void add_column(std::string header, Align align = Align::Right);
  void add_row(std::vector<std::string> cells);  // one cell per column
  std::string render() const;                     // header, rule, rows; ends with '\n'

 private:
  std::vector<std::string> headers_;
  std::vector<Align> aligns_;
  std::vector<std::vector<std::string>> rows_;
};

std::string format_percent(double fraction);  // 0.1234 -> "12.34 %"
std::string format_signed_percent(double fraction);  // 0.1234 -> "+12.34 %", -0.5 -> "-50.00 %"
std::string format_fixed(double value, int decimals);

// `text` broken at spaces into lines of at most 95 characters, each ending with '\n': the
// notes under a table.
std::string wrap_note(const std::string& text);

}  // namespace pipesim
