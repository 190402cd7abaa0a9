#include "e2e/doc_figures.h"

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "core/json.h"

namespace realign::testing {
namespace {

const std::string kOpen = "<!-- figure:";
const std::string kClose = "-->";

// Whitespace runs as one space, none at the ends.
std::string normalise(const std::string& s) {
  std::string out;
  bool space = false;
  for (char c : s) {
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      space = !out.empty();
    } else {
      if (space) out += ' ';
      space = false;
      out += c;
    }
  }
  return out;
}

std::vector<std::string> split(const std::string& s, const std::string& sep) {
  std::vector<std::string> parts;
  size_t from = 0;
  for (size_t at; (at = s.find(sep, from)) != std::string::npos; from = at + sep.size())
    parts.push_back(s.substr(from, at - from));
  parts.push_back(s.substr(from));
  return parts;
}

std::string escape(const std::string& s) {
  static const std::string special = R"(\^$.|?*+()[]{}/-)";
  std::string out;
  for (char c : s) {
    if (special.find(c) != std::string::npos) out += '\\';
    out += c;
  }
  return out;
}

// Matches text as written, any whitespace where it has a space (a value or item wrapped over lines).
std::string shape_free(const std::string& text) {
  std::string out;
  for (char c : text) out += c == ' ' ? std::string("\\s+") : escape(std::string(1, c));
  return out;
}

// The first match of pattern in text replaced by replacement, taken literally.
void replace_first(std::string& text, const std::string& pattern, const std::string& replacement) {
  std::smatch m;
  if (std::regex_search(text, m, std::regex(pattern)))
    text = text.substr(0, size_t(m.position(0))) + replacement +
           text.substr(size_t(m.position(0) + m.length(0)));
}

// text without the figure markers in it (a block may start with the markers stacked after the first).
std::string without_markers(std::string text) {
  for (size_t at; (at = text.find(kOpen)) != std::string::npos;) {
    const size_t close = text.find(kClose, at);
    text.erase(at, close == std::string::npos ? std::string::npos : close + kClose.size() - at);
  }
  return text;
}

// A value's shape: its text with each run of digits any run of digits, and a space any whitespace.
std::string shape(const std::string& value) {
  std::string out;
  for (size_t i = 0; i < value.size();) {
    if (std::isdigit(static_cast<unsigned char>(value[i]))) {
      while (i < value.size() && std::isdigit(static_cast<unsigned char>(value[i]))) ++i;
      out += "[0-9]+";
    } else if (value[i] == ' ') {
      out += "\\s+";
      ++i;
    } else {
      out += escape(std::string(1, value[i++]));
    }
  }
  return out;
}

// An item "label [value] text [value] ...": its literal parts and values, in order (no brackets: one value).
struct TextItem {
  std::vector<std::string> literals;  // one more than values
  std::vector<std::string> values;
  bool bracketed = false;
  std::string printed() const {
    std::string s = literals[0];
    for (size_t i = 0; i < values.size(); ++i) s += values[i] + literals[i + 1];
    return s;
  }
};

TextItem parse_text_item(const std::string& item) {
  TextItem t;
  t.literals.emplace_back();
  for (size_t i = 0; i < item.size(); ++i) {
    if (item[i] == '[') {
      const size_t close = item.find(']', i);
      if (close == std::string::npos) throw std::runtime_error("unclosed [ in figure item '" + item + "'");
      t.values.push_back(item.substr(i + 1, close - i - 1));
      t.literals.emplace_back();
      t.bracketed = true;
      i = close;
    } else {
      t.literals.back() += item[i];
    }
  }
  if (!t.bracketed) t = TextItem{{"", ""}, {item}, false};
  return t;
}

// The first line of output containing label (normalised), or "".
std::string line_with(const std::string& output, const std::string& label) {
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);)
    if (normalise(line).find(label) != std::string::npos) return normalise(line);
  return "";
}

// The last line of output with text on it (where a failed command says why).
std::string last_line(const std::string& output) {
  std::string last;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);)
    if (!normalise(line).empty()) last = normalise(line);
  return last;
}

void check_text_item(const std::string& output, const std::string& block, FigureCheck& c) {
  const TextItem t = parse_text_item(c.item);
  const std::string printed = normalise(t.printed());
  const bool is_printed = normalise(output).find(printed) != std::string::npos;
  std::vector<std::string> unquoted;
  for (const std::string& v : t.values)
    if (block.find(normalise(v)) == std::string::npos) unquoted.push_back(v);
  c.ok = is_printed && unquoted.empty();
  if (!is_printed) {
    // Where the figure is printed now: the line with the item's label (its text before the first figure).
    std::string label = t.bracketed ? t.literals[0] : printed.substr(0, printed.find_first_of("0123456789"));
    label = normalise(label);
    const std::string line = label.empty() ? "" : line_with(output, label);
    c.problem =
        "expected '" + printed + "', printed " +
        (line.empty() ? "nothing like it (its last line: '" + last_line(output) + "')" : "'" + line + "'");
    if (!label.empty()) {
      // The printed values, where the item's text up to its last figure matches by shape.
      std::string pattern = escape(t.literals[0]);
      for (size_t i = 0; i < t.values.size(); ++i)
        pattern +=
            "(" + shape(t.values[i]) + ")" + (i + 1 < t.values.size() ? escape(t.literals[i + 1]) : "");
      std::smatch m;
      const std::string out = normalise(output);
      if (std::regex_search(out, m, std::regex(pattern))) {
        TextItem now = t;
        for (size_t i = 0; i < t.values.size(); ++i) {
          now.values[i] = m[i + 1].str();
          if (now.values[i] != t.values[i]) c.rewrites.emplace_back(t.values[i], now.values[i]);
        }
        if (t.bracketed) {
          c.new_item = now.literals[0];
          for (size_t i = 0; i < now.values.size(); ++i)
            c.new_item += "[" + now.values[i] + "]" + now.literals[i + 1];
        } else {
          c.new_item = now.values[0];
        }
      }
    }
  }
  for (const std::string& v : unquoted)
    c.problem +=
        std::string(c.problem.empty() ? "" : "; ") + "'" + v + "' is not quoted in the text after the marker";
}

void check_json_item(const std::string& output, const std::string& block, FigureCheck& c) {
  const auto eq = c.item.find(" = ");
  if (eq == std::string::npos) throw std::runtime_error("figure item '" + c.item + "' has no ' = VALUE'");
  const std::string path = c.item.substr(2, eq - 2), value = c.item.substr(eq + 3);
  const size_t open = output.find('{'), close = output.rfind('}');
  Json j;
  try {
    if (open == std::string::npos || close == std::string::npos) throw std::runtime_error("no JSON object");
    j = Json::parse(output.substr(open, close - open + 1));
  } catch (const std::exception& e) {
    c.problem = "expected JSON with " + path + ", printed no JSON object (" + e.what() + ")";
    return;
  }
  const Json* node = &j;
  for (const std::string& key : split(path, ".")) {
    if (!node->is_object() || !node->contains(key)) break;
    node = &(*node)[key];
  }
  if (!node->is_number()) {
    c.problem = "expected " + path + " = " + value + ", printed no number at " + path;
    return;
  }
  const size_t dot = value.find('.');
  const int decimals = dot == std::string::npos ? 0 : int(value.size() - dot - 1);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, node->get<double>());
  const std::string now = buf;
  const bool quoted = block.find(value) != std::string::npos;
  c.ok = now == value && quoted;
  if (now != value) {
    c.problem = "expected " + path + " = " + value + ", printed " + now + " (" + node->dump() + ")";
    c.rewrites.emplace_back(value, now);
    c.new_item = "$." + path + " = " + now;
  }
  if (!quoted)
    c.problem += std::string(c.problem.empty() ? "" : "; ") + "'" + value +
                 "' is not quoted in the text after the marker";
}

}  // namespace

std::vector<FigureMarker> find_figure_markers(const std::string& text) {
  std::vector<FigureMarker> markers;
  for (size_t at = text.find(kOpen); at != std::string::npos; at = text.find(kOpen, at + 1)) {
    const size_t line_start = text.rfind('\n', at) == std::string::npos ? 0 : text.rfind('\n', at) + 1;
    if (text.find_first_not_of(" \t", line_start) != at) continue;  // quoted in a sentence, not a marker
    FigureMarker m;
    m.begin = at;
    m.line = int(std::count(text.begin(), text.begin() + at, '\n')) + 1;
    const size_t close = text.find(kClose, at);
    if (close == std::string::npos)
      throw std::runtime_error("line " + std::to_string(m.line) + ": figure marker without -->");
    m.end = close + kClose.size();
    const auto parts = split(normalise(text.substr(at + kOpen.size(), close - at - kOpen.size())), " | ");
    if (parts.size() < 2 || parts[0].empty())
      throw std::runtime_error("line " + std::to_string(m.line) +
                               ": a figure marker is 'ARGS | ITEM [| ITEM]'");
    m.args = parts[0];
    m.items.assign(parts.begin() + 1, parts.end());
    // The block: from the marker's end (past blank lines right after it) to the next blank line.
    m.block_begin = m.end;
    while (m.block_begin < text.size() && std::isspace(static_cast<unsigned char>(text[m.block_begin])))
      ++m.block_begin;
    m.block_end = text.size();
    for (size_t nl = text.find('\n', m.block_begin); nl != std::string::npos; nl = text.find('\n', nl + 1)) {
      const size_t next = text.find('\n', nl + 1);
      const std::string line = text.substr(nl + 1, (next == std::string::npos ? text.size() : next) - nl - 1);
      if (normalise(line).empty()) {
        m.block_end = nl;
        break;
      }
    }
    markers.push_back(m);
  }
  return markers;
}

std::vector<FigureCheck> check_figures(const std::string& file, const std::string& text,
                                       const FigureCommand& run) {
  std::vector<FigureCheck> checks;
  std::map<std::string, std::string> outputs;
  for (const FigureMarker& m : find_figure_markers(text)) {
    auto [it, fresh] = outputs.emplace(m.args, "");
    if (fresh) it->second = run(m.args);
    const std::string block =
        normalise(without_markers(text.substr(m.block_begin, m.block_end - m.block_begin)));
    for (const std::string& item : m.items) {
      FigureCheck c;
      c.file = file;
      c.line = m.line;
      c.args = m.args;
      c.item = item;
      if (item.rfind("$.", 0) == 0)
        check_json_item(it->second, block, c);
      else
        check_text_item(it->second, block, c);
      checks.push_back(c);
    }
  }
  return checks;
}

std::string rewrite_figures(const std::string& text, const std::vector<FigureCheck>& checks) {
  std::string out = text;
  const auto markers = find_figure_markers(text);
  for (auto m = markers.rbegin(); m != markers.rend(); ++m) {
    std::string marker = out.substr(m->begin, m->end - m->begin);
    std::string block = out.substr(m->block_begin, m->block_end - m->block_begin);
    for (const FigureCheck& c : checks) {
      if (c.line != m->line || c.ok || c.new_item.empty()) continue;
      // The item in the marker (it may wrap: any whitespace between its words).
      replace_first(marker, shape_free(c.item), c.new_item);
      for (const auto& [old_value, new_value] : c.rewrites)
        replace_first(block, shape_free(old_value), new_value);
    }
    out = out.substr(0, m->begin) + marker + out.substr(m->end, m->block_begin - m->end) + block +
          out.substr(m->block_end);
  }
  return out;
}

std::string describe(const FigureCheck& c) {
  return c.file + ":" + std::to_string(c.line) + ": realign " + c.args + ": '" + c.item +
         "': " + (c.ok ? std::string("ok") : c.problem);
}

std::string run_realign_in(const std::string& root, const std::string& binary, const std::string& args) {
  const std::string cmd = "cd '" + root + "' && '" + binary + "' " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) throw std::runtime_error("cannot run " + cmd);
  std::string output;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  const int status = pclose(pipe);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    output += "\n[realign " + args + " exited with status " + std::to_string(WEXITSTATUS(status)) + "]\n";
  return output;
}

}  // namespace realign::testing
