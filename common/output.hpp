// Result rows: an fmt table for people, CSV and JSON with stable snake_case columns for scripts.
#pragma once

#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace cml {

struct DeviceInfo;

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Row {
  std::string demo;
  std::string variant;
  std::string params;      // e.g. "offset=11" (empty when the variant has one point)
  std::uint64_t size = 0;  // the demo's size unit (see its --help)
  double bytes = 0.0;      // bytes read + written by one launch
  double median_ms = kNaN;
  double min_ms = kNaN;
  double max_ms = kNaN;
  double spread_pct = kNaN;
  double gb_per_s = kNaN;
  double pct_peak = kNaN;
  int reps = 0;
  int batch = 0;           // launches per timed sample
  std::string cache;       // "cold" (L2 flushed before each sample), "warm", or "" (not timed on the GPU)
  bool verified = false;
  // Demo-specific columns, in insertion order; numbers are kept as numbers in JSON.
  std::vector<std::pair<std::string, std::string>> extra;
  std::vector<bool> extra_numeric;

  Row& set(const std::string& key, double value);
  Row& set(const std::string& key, const std::string& value);
  Row& set(const std::string& key, const char* value) { return set(key, std::string(value)); }
  const std::string* get(const std::string& key) const;

};

// A CSV field (quoted when it holds a comma, quote or newline) and a JSON string literal.
std::string csv_escape(const std::string& s);
std::string json_string(const std::string& s);

// Formats a number for tables: 4 significant digits, no exponent for ordinary magnitudes.
std::string format_number(double v);

void print_table(const std::vector<Row>& rows, std::FILE* out);
std::string to_csv(const std::vector<Row>& rows, const std::string& device_name);
// `extra_members`: further top-level members, already JSON (e.g. "\"claims\": [...]"), or empty.
std::string to_json(const std::vector<Row>& rows, const DeviceInfo* device, const std::string& demo,
                    const std::vector<std::string>& extra_members = {});

// Writes `content` to `path` through a temporary file and a rename, so an interrupted run never
// leaves a truncated file ("-" writes to stdout). Throws std::runtime_error on failure.
void write_file_atomically(const std::string& path, const std::string& content);
// Fails early (before any GPU work) when `path` cannot be written: creates and removes a probe file.
void check_writable(const std::string& path);

}  // namespace cml
