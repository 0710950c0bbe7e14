# Build helpers shared by every chapter: one flags target, one add_demo(), test helpers.

# Every target of the suite links this: language level, warnings, line info for Nsight Compute.
add_library(cml_flags INTERFACE)
add_library(cml::flags ALIAS cml_flags)
target_compile_features(cml_flags INTERFACE cxx_std_17 cuda_std_17)
target_include_directories(cml_flags INTERFACE ${PROJECT_SOURCE_DIR})
target_compile_options(cml_flags INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra>
  $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo -Xcompiler=-Wall,-Wextra --expt-relaxed-constexpr>
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:${CML_WERROR}>>:-Werror>
  $<$<AND:$<COMPILE_LANGUAGE:CUDA>,$<BOOL:${CML_WERROR}>>:-Werror=all-warnings>)

# Exit codes every demo uses; CTest treats 77 as "skipped".
set(CML_EXIT_WAIVED 77)

# How a demo or GPU test binary must be run, declared where it is (add_demo, add_cml_test) and written to
# <build>/target_flags.txt ("name|flag,flag" per target, lower case; scripts/lib/run_folder.py reads it):
#   DEVICE_STATE  it changes device-wide state (the persisting-L2 set-aside, access-policy windows) or reads
#                 it back and compares: the scripts that run targets side by side run it alone
#   ALL_GPUS      it needs every GPU visible (peer access); the others may be given one GPU each
set(CML_RUN_FLAGS DEVICE_STATE ALL_GPUS)

# cml_record_run_flags(<name>): the line of <name> in target_flags.txt, from the ARG_<flag> options its caller
# (add_demo, add_cml_test) parsed.
function(cml_record_run_flags name)
  set(flags)
  foreach(flag IN LISTS CML_RUN_FLAGS)
    if(ARG_${flag})
      string(TOLOWER ${flag} lower)
      list(APPEND flags ${lower})
    endif()
  endforeach()
  list(JOIN flags "," flags)
  set_property(GLOBAL APPEND PROPERTY CML_TARGET_FLAGS "${name}|${flags}")
endfunction()

# add_demo(<name> SOURCES <files...> [ARGS <smoke args...>] [COMPILE_OPTIONS <opts...>] [NO_SMOKE]
#          [BAD_OPTIONS "<args>" ...] [EXTRA_RUNS "<label>|<args>" ...] [TIMELINE] [DEVICE_STATE] [ALL_GPUS])
#
# Creates executable <name> (output in <build>/bin), links the common harness and flags, and registers
# `smoke.<name>` running it with --quick (labels: smoke, gpu). With no GPU it exits 77 -> skipped.
# Each BAD_OPTIONS entry is one command line the demo must refuse on a GPU before it prints anything:
# `options.<name>` (label gpu; tests/option_contract.sh) expects exit 2, one line on stderr, none on stdout.
# What the main job runs is declared here too, in <build>/demo_runs.txt ("demo|label|args|timeline" per line):
# the demo at its defaults under its own name, one more run per EXTRA_RUNS entry (a label of its own and the
# arguments that make it, e.g. "transpose_shared_16384|--size 16384"), and with TIMELINE every run also writes
# the stream timeline (--timeline <run folder>/<label>.timeline.json) that the report draws.
# DEVICE_STATE and ALL_GPUS: how the demo must be run (CML_RUN_FLAGS above).
function(add_demo name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "NO_SMOKE;TIMELINE;${CML_RUN_FLAGS}" ""
                        "SOURCES;ARGS;COMPILE_OPTIONS;BAD_OPTIONS;EXTRA_RUNS")
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE cml::common cml::flags)
  if(ARG_COMPILE_OPTIONS)
    target_compile_options(${name} PRIVATE ${ARG_COMPILE_OPTIONS})
  endif()
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)
  set_property(GLOBAL APPEND PROPERTY CML_DEMOS ${name})
  # chapter/name pairs for scripts/run_all.sh (written to <build>/demos.txt).
  get_filename_component(chapter ${CMAKE_CURRENT_SOURCE_DIR} NAME)
  set_property(GLOBAL APPEND PROPERTY CML_DEMO_CHAPTERS "${chapter}/${name}")
  set(timeline 0)
  if(ARG_TIMELINE)
    set(timeline 1)
  endif()
  set_property(GLOBAL APPEND PROPERTY CML_DEMO_RUNS "${name}|${name}||${timeline}")
  foreach(extra IN LISTS ARG_EXTRA_RUNS)
    if(NOT extra MATCHES "^${name}_[a-z0-9_]+\\|")
      message(FATAL_ERROR "add_demo(${name}): EXTRA_RUNS entry '${extra}' must be '${name}_<suffix>|<args>'")
    endif()
    set_property(GLOBAL APPEND PROPERTY CML_DEMO_RUNS "${name}|${extra}|${timeline}")
  endforeach()
  cml_record_run_flags(${name})
  if(CML_BUILD_TESTS AND NOT ARG_NO_SMOKE)
    add_test(NAME smoke.${name} COMMAND ${name} --quick ${ARG_ARGS})
    set_tests_properties(smoke.${name} PROPERTIES
      LABELS "smoke;gpu" SKIP_RETURN_CODE ${CML_EXIT_WAIVED} TIMEOUT 300 RESOURCE_LOCK gpu)
  endif()
  if(CML_BUILD_TESTS AND ARG_BAD_OPTIONS)
    add_test(NAME options.${name}
             COMMAND bash ${PROJECT_SOURCE_DIR}/tests/option_contract.sh $<TARGET_FILE:${name}> ${ARG_BAD_OPTIONS})
    set_tests_properties(options.${name} PROPERTIES
      LABELS gpu SKIP_RETURN_CODE ${CML_EXIT_WAIVED} TIMEOUT 120 RESOURCE_LOCK gpu)
  endif()
endfunction()

# add_cml_test(<name> LABEL cpu|gpu SOURCES <files...> [COMPILE_OPTIONS <opts...>] [DEVICE_STATE] [ALL_GPUS])
#
# A GoogleTest executable whose tests are discovered individually. GPU tests call GTEST_SKIP() when no
# device is usable; SKIP_REGULAR_EXPRESSION makes CTest report those as skipped, never passed. (The
# regex has no brackets or backslashes: CMake 4.x's discovery script does not survive escaped ones.)
# DEVICE_STATE and ALL_GPUS (gpu tests only): how the binary must be run (CML_RUN_FLAGS above).
function(add_cml_test name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "${CML_RUN_FLAGS}" "LABEL" "SOURCES;COMPILE_OPTIONS")
  if(NOT ARG_LABEL MATCHES "^(cpu|gpu)$")
    message(FATAL_ERROR "add_cml_test(${name}): LABEL must be cpu or gpu")
  endif()
  if(ARG_LABEL STREQUAL "cpu" AND (ARG_DEVICE_STATE OR ARG_ALL_GPUS))
    message(FATAL_ERROR "add_cml_test(${name}): DEVICE_STATE and ALL_GPUS are for gpu tests")
  endif()
  cml_record_run_flags(${name})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE cml::common cml::testing cml::flags GTest::gtest GTest::gtest_main)
  if(ARG_COMPILE_OPTIONS)
    target_compile_options(${name} PRIVATE ${ARG_COMPILE_OPTIONS})
  endif()
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests)
  # GPU tests hold the `gpu` lock: `ctest -j N` runs CPU tests side by side but never two GPU tests at
  # once (timings, device memory and the device-wide persisting-L2 state stay each test's own).
  set(lock)
  if(ARG_LABEL STREQUAL "gpu")
    set(lock RESOURCE_LOCK gpu)
  endif()
  gtest_discover_tests(${name}
    TEST_PREFIX "${ARG_LABEL}."
    DISCOVERY_MODE PRE_TEST
    DISCOVERY_TIMEOUT 60
    PROPERTIES LABELS ${ARG_LABEL} SKIP_REGULAR_EXPRESSION "  SKIPPED " TIMEOUT 600 ${lock})
endfunction()
