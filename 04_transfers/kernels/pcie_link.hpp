// The PCIe link a GPU reports through Linux sysfs (/sys/bus/pci/devices/<bus id>/current_link_speed,
// current_link_width, max_link_speed, max_link_width), and the payload bandwidth that link can carry
// per direction after line encoding (before packet headers, which cost another 5-15 %).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace cml::ch04 {

// "0000:3B:00.0" (cudaDeviceGetPCIBusId) -> "0000:3b:00.0" (the sysfs name). Empty if it does not parse.
inline std::string sysfs_bus_id(const std::string& cuda_bus_id) {
  unsigned domain = 0, bus = 0, dev = 0, fn = 0;
  if (std::sscanf(cuda_bus_id.c_str(), "%x:%x:%x.%x", &domain, &bus, &dev, &fn) != 4) return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", domain, bus, dev, fn);
  return buf;
}

// "32.0 GT/s PCIe" -> 32.0; 0 when unknown ("Unknown", empty).
inline double parse_link_speed_gt(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || v <= 0.0) return 0.0;
  return v;
}

// Payload GB/s per lane and direction. Gen1/2 use 8b/10b encoding, Gen3-5 128b/130b, Gen6 PAM4 with
// 256-byte FLITs of which 242 bytes are payload.
inline double pcie_lane_gb_per_s(double gt_per_s) {
  if (gt_per_s <= 0.0) return 0.0;
  if (gt_per_s <= 5.0) return gt_per_s * (8.0 / 10.0) / 8.0;
  if (gt_per_s <= 32.0) return gt_per_s * (128.0 / 130.0) / 8.0;
  return gt_per_s * (242.0 / 256.0) / 8.0;
}

inline int pcie_generation(double gt_per_s) {
  const double gens[] = {2.5, 5.0, 8.0, 16.0, 32.0, 64.0};
  for (int g = 0; g < 6; ++g)
    if (gt_per_s > 0.0 && gt_per_s <= gens[g] * 1.01) return g + 1;
  return 0;
}

struct PcieLink {
  bool readable = false;
  std::string why;  // when not readable
  std::string path;
  double current_gt = 0.0, max_gt = 0.0;
  int current_width = 0, max_width = 0;
  double gb_per_s() const { return pcie_lane_gb_per_s(current_gt) * current_width; }
  double max_gb_per_s() const { return pcie_lane_gb_per_s(max_gt) * max_width; }
};

inline bool read_first_line(const std::string& path, std::string& out) {
  std::ifstream f(path);
  return static_cast<bool>(std::getline(f, out));
}

// Reads the link of the PCI device `sysfs_id` under `root` (a parameter so tests can use a fake tree).
inline PcieLink read_pcie_link(const std::string& sysfs_id, const std::string& root = "/sys/bus/pci/devices") {
  PcieLink link;
  if (sysfs_id.empty()) {
    link.why = "no PCI bus id";
    return link;
  }
  link.path = root + "/" + sysfs_id;
  std::string cs, cw, ms, mw;
  if (!read_first_line(link.path + "/current_link_speed", cs) || !read_first_line(link.path + "/current_link_width", cw)) {
    link.why = link.path + "/current_link_{speed,width} not readable (container or non-Linux host?)";
    return link;
  }
  link.current_gt = parse_link_speed_gt(cs);
  link.current_width = std::atoi(cw.c_str());
  if (read_first_line(link.path + "/max_link_speed", ms)) link.max_gt = parse_link_speed_gt(ms);
  if (read_first_line(link.path + "/max_link_width", mw)) link.max_width = std::atoi(mw.c_str());
  link.readable = link.current_gt > 0.0 && link.current_width > 0;
  if (!link.readable) link.why = "sysfs reports speed '" + cs + "', width '" + cw + "'";
  return link;
}

}  // namespace cml::ch04
