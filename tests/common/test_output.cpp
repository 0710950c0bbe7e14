// Output: CSV/JSON columns are stable; files are written through a rename.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "common/output.hpp"

namespace {

cml::Row row(const std::string& variant) {
  cml::Row r;
  r.demo = "demo";
  r.variant = variant;
  r.params = "offset=11";
  r.size = 1024;
  r.bytes = 8192;
  r.median_ms = 0.5;
  r.min_ms = 0.4;
  r.max_ms = 0.6;
  r.spread_pct = 40;
  r.gb_per_s = 16.384;
  r.pct_peak = 1.5;
  r.reps = 20;
  r.batch = 1;
  r.cache = "cold";
  r.verified = true;
  return r;
}

TEST(Csv, HeaderAndExtras) {
  auto a = row("copy");
  a.set("sectors_per_request", 5.0);
  auto b = row("naive, \"quoted\"");
  b.set("note", "x");
  const std::string csv = cml::to_csv({a, b}, "NVIDIA H200");
  std::istringstream in(csv);
  std::string header, l1, l2;
  std::getline(in, header);
  std::getline(in, l1);
  std::getline(in, l2);
  EXPECT_EQ(header,
            "device,demo,variant,params,size,bytes,median_ms,min_ms,max_ms,spread_pct,gb_per_s,pct_peak,reps,"
            "batch,cache,verified,sectors_per_request,note");
  EXPECT_EQ(l1, "NVIDIA H200,demo,copy,offset=11,1024,8192,0.5,0.4,0.6,40,16.384,1.5,20,1,cold,true,5,");
  EXPECT_NE(l2.find("\"naive, \"\"quoted\"\"\""), std::string::npos);
  EXPECT_EQ(l2.substr(l2.size() - 3), ",,x");
}

TEST(Csv, UntimedRowsLeaveCellsEmpty) {
  cml::Row r;
  r.demo = "d";
  r.variant = "v";
  r.verified = false;
  const std::string csv = cml::to_csv({r}, "gpu");
  EXPECT_NE(csv.find("gpu,d,v,,0,0,,,,,,,0,0,,false"), std::string::npos);
}

TEST(Json, NumbersStayNumbersAndNanIsNull) {
  auto a = row("copy");
  a.set("ratio", 0.97);
  a.set("label", "x\"y");
  a.median_ms = NAN;
  const std::string js = cml::to_json({a}, nullptr, "demo");
  EXPECT_NE(js.find("\"ratio\": 0.97"), std::string::npos);
  EXPECT_NE(js.find("\"label\": \"x\\\"y\""), std::string::npos);
  EXPECT_NE(js.find("\"median_ms\": null"), std::string::npos);
  EXPECT_NE(js.find("\"device\": null"), std::string::npos);
}

TEST(Row, SetReplaces) {
  cml::Row r;
  r.set("k", 1.0);
  r.set("k", "text");
  ASSERT_EQ(r.extra.size(), 1u);
  EXPECT_EQ(*r.get("k"), "text");
  EXPECT_EQ(r.get("missing"), nullptr);
}

TEST(FormatNumber, Readable) {
  EXPECT_EQ(cml::format_number(NAN), "-");
  EXPECT_EQ(cml::format_number(4251.7), "4252");
  EXPECT_EQ(cml::format_number(123.456), "123.5");
  EXPECT_EQ(cml::format_number(12.3456), "12.35");
  EXPECT_EQ(cml::format_number(1.23456), "1.235");
  EXPECT_EQ(cml::format_number(0.123456), "0.1235");
  EXPECT_EQ(cml::format_number(0.0), "0");
}

TEST(Files, AtomicWriteReplacesWholeFile) {
  const std::string path = testing::TempDir() + "cml_atomic_" + std::to_string(getpid()) + ".csv";
  cml::write_file_atomically(path, "first\n");
  cml::write_file_atomically(path, "second\n");
  std::ifstream f(path);
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(s, "second\n");
  std::remove(path.c_str());
  // No temporary left behind.
  std::ifstream tmp(path + ".tmp." + std::to_string(getpid()));
  EXPECT_FALSE(tmp.good());
}

TEST(Files, UnwritablePathThrows) {
  EXPECT_THROW(cml::check_writable("/nonexistent-dir/x.csv"), std::runtime_error);
  EXPECT_THROW(cml::write_file_atomically("/nonexistent-dir/x.csv", "x"), std::runtime_error);
  EXPECT_NO_THROW(cml::check_writable("-"));
}

}  // namespace
