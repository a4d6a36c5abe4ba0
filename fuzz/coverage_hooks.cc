// GCC's -fsanitize-coverage=trace-cmp also emits float/double comparison hooks,
// which neither the sanitizer runtime nor libFuzzer defines. These weak no-op
// definitions let every instrumented binary link; libFuzzer's strong hooks
// (integer comparisons) still take effect in the fuzz targets.
extern "C" {
__attribute__((weak)) void __sanitizer_cov_trace_cmpf(float, float) {}
__attribute__((weak)) void __sanitizer_cov_trace_cmpd(double, double) {}
}
