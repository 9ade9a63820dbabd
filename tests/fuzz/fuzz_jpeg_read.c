/* libFuzzer target: bytes -> JPEG decoder of the calibration reader (user-supplied
 * --calib folders). Must either give an image whose buffer holds width x height RGB
 * pixels within the limits, or fail cleanly. */
#include <stddef.h>
#include <stdint.h>

#include "quant/calib_data.h"

const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1:max_allocation_size_mb=256"; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  nnp_image img;
  if (nnp_image_decode(data, size, &img) != NNP_OK) return 0;
  if (img.width <= 0 || img.height <= 0 || img.width > NNP_IMAGE_MAX_SIDE || img.height > NNP_IMAGE_MAX_SIDE)
    __builtin_trap();
  volatile uint8_t sum = 0;
  for (size_t i = 0; i < (size_t)img.width * img.height * 3; i++) sum ^= img.rgb[i];
  (void)sum;
  nnp_image_free(&img);
  return 0;
}
