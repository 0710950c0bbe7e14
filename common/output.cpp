#include "common/output.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <unistd.h>

#include <fmt/format.h>

#include "common/device_info.hpp"

namespace cml {

Row& Row::set(const std::string& key, double value) {
  for (std::size_t i = 0; i < extra.size(); ++i)
    if (extra[i].first == key) {
      extra[i].second = fmt::format("{}", value);
      extra_numeric[i] = true;
      return *this;
    }
  extra.emplace_back(key, fmt::format("{}", value));
  extra_numeric.push_back(true);
  return *this;
}

Row& Row::set(const std::string& key, const std::string& value) {
  for (std::size_t i = 0; i < extra.size(); ++i)
    if (extra[i].first == key) {
      extra[i].second = value;
      extra_numeric[i] = false;
      return *this;
    }
  extra.emplace_back(key, value);
  extra_numeric.push_back(false);
  return *this;
}

const std::string* Row::get(const std::string& key) const {
  for (const auto& kv : extra)
    if (kv.first == key) return &kv.second;
  return nullptr;
}

std::string format_number(double v) {
  if (std::isnan(v)) return "-";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  const double a = std::fabs(v);
  if (a == 0.0) return "0";
  if (a >= 1e7 || a < 1e-4) return fmt::format("{:.3e}", v);
  if (a >= 1000.0) return fmt::format("{:.0f}", v);
  if (a >= 100.0) return fmt::format("{:.1f}", v);
  if (a >= 10.0) return fmt::format("{:.2f}", v);
  if (a >= 1.0) return fmt::format("{:.3f}", v);
  return fmt::format("{:.4f}", v);
}

namespace {

std::vector<std::string> extra_columns(const std::vector<Row>& rows) {
  std::vector<std::string> cols;
  for (const auto& r : rows)
    for (const auto& kv : r.extra) {
      bool have = false;
      for (const auto& c : cols) have = have || c == kv.first;
      if (!have) cols.push_back(kv.first);
    }
  return cols;
}

std::string extra_text(const Row& r, const std::string& key) {
  const std::string* v = r.get(key);
  if (v == nullptr) return "";
  // Numbers in tables get the same formatting as the timing columns.
  char* end = nullptr;
  const double d = std::strtod(v->c_str(), &end);
  if (!v->empty() && end == v->c_str() + v->size()) return format_number(d);
  return *v;
}

std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  return fmt::format("{}", v);
}

std::string csv_number(double v) {
  if (!std::isfinite(v)) return "";
  return fmt::format("{}", v);
}

}  // namespace

std::string csv_escape(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\u{:04x}", static_cast<int>(c));
        else out += c;
    }
  }
  return out + "\"";
}

void print_table(const std::vector<Row>& rows, std::FILE* out) {
  if (rows.empty()) return;
  const std::vector<std::string> extras = extra_columns(rows);
  std::vector<std::string> header = {"variant", "params", "size", "MB moved", "median ms", "min ms",
                                     "spread %", "GB/s", "% peak"};
  for (const auto& e : extras) header.push_back(e);
  header.push_back("verified");

  std::vector<std::vector<std::string>> cells;
  for (const auto& r : rows) {
    std::vector<std::string> c = {r.variant,
                                  r.params,
                                  std::to_string(r.size),
                                  r.bytes > 0 ? format_number(r.bytes / 1e6) : "-",
                                  format_number(r.median_ms),
                                  format_number(r.min_ms),
                                  format_number(r.spread_pct),
                                  format_number(r.gb_per_s),
                                  format_number(r.pct_peak)};
    for (const auto& e : extras) c.push_back(extra_text(r, e));
    c.push_back(r.verified ? "yes" : "NO");
    cells.push_back(std::move(c));
  }
  std::vector<std::size_t> width(header.size());
  for (std::size_t i = 0; i < header.size(); ++i) {
    width[i] = header[i].size();
    for (const auto& c : cells) width[i] = std::max(width[i], c[i].size());
  }
  auto line = [&](const std::vector<std::string>& c) {
    std::string s;
    for (std::size_t i = 0; i < c.size(); ++i) {
      if (i > 0) s += "  ";
      // Text columns left-aligned, numbers right-aligned.
      s += (i < 2) ? fmt::format("{:<{}}", c[i], width[i]) : fmt::format("{:>{}}", c[i], width[i]);
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    fmt::print(out, "{}\n", s);
  };
  line(header);
  std::size_t total = 0;
  for (auto w : width) total += w + 2;
  fmt::print(out, "{}\n", std::string(total - 2, '-'));
  for (const auto& c : cells) line(c);
}

std::string to_csv(const std::vector<Row>& rows, const std::string& device_name) {
  const std::vector<std::string> extras = extra_columns(rows);
  std::string s =
      "device,demo,variant,params,size,bytes,median_ms,min_ms,max_ms,spread_pct,gb_per_s,pct_peak,reps,batch,"
      "cache,verified";
  for (const auto& e : extras) s += "," + csv_escape(e);
  s += "\n";
  for (const auto& r : rows) {
    s += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}", csv_escape(device_name),
                     csv_escape(r.demo), csv_escape(r.variant), csv_escape(r.params), r.size,
                     csv_number(r.bytes), csv_number(r.median_ms), csv_number(r.min_ms), csv_number(r.max_ms),
                     csv_number(r.spread_pct), csv_number(r.gb_per_s), csv_number(r.pct_peak), r.reps, r.batch,
                     r.cache, r.verified ? "true" : "false");
    for (const auto& e : extras) {
      const std::string* v = r.get(e);
      s += "," + (v ? csv_escape(*v) : std::string());
    }
    s += "\n";
  }
  return s;
}

std::string to_json(const std::vector<Row>& rows, const DeviceInfo* d, const std::string& demo,
                    const std::vector<std::string>& extra_members) {
  std::string s = "{\n  \"demo\": " + json_string(demo) + ",\n  \"device\": ";
  if (d != nullptr) {
    s += fmt::format(
        "{{\"name\": {}, \"slug\": {}, \"cc\": \"{}.{}\", \"sm_count\": {}, \"sm_clock_mhz\": {}, "
        "\"memory_clock_mhz\": {}, \"bus_width_bits\": {}, \"total_memory_bytes\": {}, \"l2_bytes\": {}, "
        "\"persisting_l2_max_bytes\": {}, \"peak_gb_per_s\": {}, \"driver\": \"{}\", \"runtime\": \"{}\"}}",
        json_string(d->name), json_string(d->slug()), d->cc_major, d->cc_minor, d->sm_count,
        d->sm_clock_khz / 1000, d->memory_clock_khz / 1000, d->bus_width_bits, d->total_memory, d->l2_bytes,
        d->persisting_l2_max, json_number(d->peak_gb_per_s), format_version(d->driver_version),
        format_version(d->runtime_version));
  } else {
    s += "null";
  }
  s += ",\n  \"rows\": [";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    s += i == 0 ? "\n    {" : ",\n    {";
    s += fmt::format(
        "\"variant\": {}, \"params\": {}, \"size\": {}, \"bytes\": {}, \"median_ms\": {}, \"min_ms\": {}, "
        "\"max_ms\": {}, \"spread_pct\": {}, \"gb_per_s\": {}, \"pct_peak\": {}, \"reps\": {}, \"batch\": {}, "
        "\"cache\": {}, \"verified\": {}",
        json_string(r.variant), json_string(r.params), r.size, json_number(r.bytes), json_number(r.median_ms),
        json_number(r.min_ms), json_number(r.max_ms), json_number(r.spread_pct), json_number(r.gb_per_s),
        json_number(r.pct_peak), r.reps, r.batch, json_string(r.cache), r.verified ? "true" : "false");
    for (std::size_t k = 0; k < r.extra.size(); ++k) {
      s += ", " + json_string(r.extra[k].first) + ": ";
      s += r.extra_numeric[k] ? json_number(std::strtod(r.extra[k].second.c_str(), nullptr))
                              : json_string(r.extra[k].second);
    }
    s += "}";
  }
  s += rows.empty() ? "]" : "\n  ]";
  for (const auto& m : extra_members) s += ",\n  " + m;
  s += "\n}\n";
  return s;
}

void write_file_atomically(const std::string& path, const std::string& content) {
  if (path == "-") {
    std::fwrite(content.data(), 1, content.size(), stdout);
    std::fflush(stdout);
    return;
  }
  const std::string tmp = path + ".tmp." + std::to_string(static_cast<long>(::getpid()));
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw std::runtime_error("cannot write " + tmp);
    f.write(content.data(), static_cast<std::streamsize>(content.size()));
    f.flush();
    if (!f) {
      std::remove(tmp.c_str());
      throw std::runtime_error("error writing " + tmp);
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot rename " + tmp + " to " + path);
  }
}

void check_writable(const std::string& path) {
  if (path.empty() || path == "-") return;
  const std::string probe = path + ".tmp." + std::to_string(static_cast<long>(::getpid()));
  std::FILE* f = std::fopen(probe.c_str(), "wb");
  if (f == nullptr) throw std::runtime_error("cannot write to " + path);
  std::fclose(f);
  std::remove(probe.c_str());
}

}  // namespace cml
