// A shared library that is not a cgc package: it lacks
// cgrt_package_descriptor.
extern "C" __attribute__((visibility("default"))) int not_a_package(void) {
  return 42;
}
