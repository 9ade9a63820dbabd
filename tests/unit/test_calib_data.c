/* Calibration data reader: PNG and JPEG decode (pixel-exact for PNG, colour types that
 * must convert to RGB), hostile files (truncated, garbage, dimensions beyond the limits,
 * no magic), the resize + centre-crop geometry and normalisation, and the deterministic
 * seeded subset of a folder. Images are encoded here with libpng/libjpeg themselves. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jpeglib.h>
#include <png.h>
#include <zlib.h>

#include "nnperf/npy.h"
#include "quant/calib_data.h"
#include "test.h"

/* ---- encoders (test-side) --------------------------------------------------------- */

typedef struct membuf {
  uint8_t *p;
  size_t n, cap;
} membuf;

static void mb_write(png_structp png, png_bytep d, png_size_t n) {
  membuf *m = png_get_io_ptr(png);
  if (m->n + n > m->cap) {
    m->cap = (m->n + n) * 2;
    m->p = realloc(m->p, m->cap);
  }
  memcpy(m->p + m->n, d, n);
  m->n += n;
}
static void mb_flush(png_structp png) { (void)png; }

/* PNG of w x h with `channels` bytes per pixel of the given colour type and depth 8. */
static membuf png_encode(int w, int h, int color, int depth, const uint8_t *pix, int bpp_bytes,
                         const png_color *palette, int n_pal) {
  membuf m = {0};
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
  png_infop info = png_create_info_struct(png);
  png_set_write_fn(png, &m, mb_write, mb_flush);
  png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, depth, color, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  if (palette) png_set_PLTE(png, info, palette, n_pal);
  png_write_info(png, info);
  if (depth == 16) png_set_swap(png); /* rows given in host (little-endian) order */
  for (int y = 0; y < h; y++) png_write_row(png, (png_bytep)(pix + (size_t)y * w * bpp_bytes));
  png_write_end(png, NULL);
  png_destroy_write_struct(&png, &info);
  return m;
}

static membuf jpeg_encode(int w, int h, int comps, const uint8_t *pix, int quality) {
  struct jpeg_compress_struct c;
  struct jpeg_error_mgr e;
  unsigned char *out = NULL;
  unsigned long n = 0;
  c.err = jpeg_std_error(&e);
  jpeg_create_compress(&c);
  jpeg_mem_dest(&c, &out, &n);
  c.image_width = (JDIMENSION)w;
  c.image_height = (JDIMENSION)h;
  c.input_components = comps;
  c.in_color_space = comps == 3 ? JCS_RGB : JCS_GRAYSCALE;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, quality, TRUE);
  jpeg_start_compress(&c, TRUE);
  while (c.next_scanline < c.image_height) {
    JSAMPROW row = (JSAMPROW)(pix + (size_t)c.next_scanline * w * comps);
    jpeg_write_scanlines(&c, &row, 1);
  }
  jpeg_finish_compress(&c);
  jpeg_destroy_compress(&c);
  membuf m = {malloc(n), n, n};
  memcpy(m.p, out, n);
  free(out);
  return m;
}

static uint32_t be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }
static void put_be32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}

/* Rewrites the IHDR dimensions of a PNG and fixes the chunk CRC, so only the limit
 * check can reject it. */
static void png_patch_dims(membuf *m, uint32_t w, uint32_t h) {
  uint8_t *ihdr = m->p + 8; /* length(4) "IHDR"(4) data(13) crc(4) */
  put_be32(ihdr + 8, w);
  put_be32(ihdr + 12, h);
  put_be32(ihdr + 21, (uint32_t)crc32(0, ihdr + 4, 17));
  (void)be32;
}

/* Rewrites the SOF0 frame size of a baseline JPEG. */
static void jpeg_patch_dims(membuf *m, unsigned w, unsigned h) {
  for (size_t i = 2; i + 9 < m->n; i++)
    if (m->p[i] == 0xFF && m->p[i + 1] == 0xC0) {
      m->p[i + 5] = (uint8_t)(h >> 8);
      m->p[i + 6] = (uint8_t)h;
      m->p[i + 7] = (uint8_t)(w >> 8);
      m->p[i + 8] = (uint8_t)w;
      return;
    }
}

/* ---- decode ------------------------------------------------------------------------ */

static void test_png_rgb_exact(void) {
  enum { W = 7, H = 5 };
  uint8_t pix[W * H * 3];
  for (int i = 0; i < W * H * 3; i++) pix[i] = (uint8_t)(i * 37 + 11);
  membuf m = png_encode(W, H, PNG_COLOR_TYPE_RGB, 8, pix, 3, NULL, 0);
  nnp_image img;
  CHECK_OK(nnp_image_decode(m.p, m.n, &img));
  CHECK(img.width == W && img.height == H);
  CHECK(img.rgb && memcmp(img.rgb, pix, sizeof pix) == 0);
  nnp_image_free(&img);
  free(m.p);
}

static void test_png_color_types(void) {
  enum { W = 4, H = 3 };
  uint8_t gray[W * H], rgba[W * H * 4], idx[W * H];
  uint16_t rgb16[W * H * 3];
  png_color pal[4] = {{0, 0, 0}, {255, 0, 0}, {0, 255, 0}, {10, 20, 30}};
  for (int i = 0; i < W * H; i++) {
    gray[i] = (uint8_t)(i * 20);
    for (int c = 0; c < 4; c++) rgba[i * 4 + c] = (uint8_t)(i * 10 + c);
    for (int c = 0; c < 3; c++) rgb16[i * 3 + c] = (uint16_t)((i * 10 + c) * 257);
    idx[i] = (uint8_t)(i % 4);
  }
  nnp_image img;
  membuf m = png_encode(W, H, PNG_COLOR_TYPE_GRAY, 8, gray, 1, NULL, 0);
  CHECK_OK(nnp_image_decode(m.p, m.n, &img));
  CHECK(img.rgb && img.rgb[3 * 5 + 0] == 100 && img.rgb[3 * 5 + 1] == 100 && img.rgb[3 * 5 + 2] == 100);
  nnp_image_free(&img);
  free(m.p);
  m = png_encode(W, H, PNG_COLOR_TYPE_RGBA, 8, rgba, 4, NULL, 0);
  CHECK_OK(nnp_image_decode(m.p, m.n, &img));
  CHECK(img.rgb && img.rgb[3 * 2 + 0] == 20 && img.rgb[3 * 2 + 1] == 21 && img.rgb[3 * 2 + 2] == 22);
  nnp_image_free(&img);
  free(m.p);
  m = png_encode(W, H, PNG_COLOR_TYPE_RGB, 16, (const uint8_t *)rgb16, 6, NULL, 0);
  CHECK_OK(nnp_image_decode(m.p, m.n, &img));
  CHECK(img.rgb && img.rgb[3 * 3 + 0] == 30 && img.rgb[3 * 3 + 2] == 32);
  nnp_image_free(&img);
  free(m.p);
  m = png_encode(W, H, PNG_COLOR_TYPE_PALETTE, 8, idx, 1, pal, 4);
  CHECK_OK(nnp_image_decode(m.p, m.n, &img));
  CHECK(img.rgb && img.rgb[3 * 3 + 0] == 10 && img.rgb[3 * 3 + 1] == 20 && img.rgb[3 * 3 + 2] == 30);
  CHECK(img.rgb && img.rgb[3 * 1 + 0] == 255 && img.rgb[3 * 1 + 1] == 0);
  nnp_image_free(&img);
  free(m.p);
}

static void test_jpeg(void) {
  enum { W = 16, H = 8 };
  uint8_t pix[W * H * 3], g[W * H];
  for (int i = 0; i < W * H; i++) {
    pix[i * 3] = 200;
    pix[i * 3 + 1] = 100;
    pix[i * 3 + 2] = 50;
    g[i] = 77;
  }
  membuf m = jpeg_encode(W, H, 3, pix, 100);
  nnp_image img;
  CHECK_OK(nnp_image_decode(m.p, m.n, &img));
  CHECK(img.width == W && img.height == H);
  int maxd = 0;
  for (int i = 0; img.rgb && i < W * H * 3; i++) {
    int d = abs((int)img.rgb[i] - pix[i]);
    if (d > maxd) maxd = d;
  }
  CHECK_MSG(maxd <= 3, "JPEG q100 of a flat colour differs by %d", maxd);
  nnp_image_free(&img);
  free(m.p);
  m = jpeg_encode(W, H, 1, g, 100); /* grayscale becomes RGB */
  CHECK_OK(nnp_image_decode(m.p, m.n, &img));
  CHECK(img.rgb && abs(img.rgb[0] - 77) <= 2 && img.rgb[0] == img.rgb[1] && img.rgb[1] == img.rgb[2]);
  nnp_image_free(&img);
  free(m.p);
}

static void test_hostile(void) {
  enum { W = 8, H = 8 };
  uint8_t pix[W * H * 3];
  memset(pix, 128, sizeof pix);
  nnp_image img;
  /* truncated at every length: never crashes, never succeeds with a short file */
  membuf p = png_encode(W, H, PNG_COLOR_TYPE_RGB, 8, pix, 3, NULL, 0);
  membuf j = jpeg_encode(W, H, 3, pix, 90);
  int png_ok = 0, jpeg_fail = 0;
  for (size_t n = 0; n < p.n - 12; n++) { /* minus IEND: the image data is all there before it */
    if (nnp_image_decode(p.p, n, &img) == NNP_OK) png_ok++;
    nnp_image_free(&img);
  }
  CHECK_MSG(png_ok == 0, "%d truncated PNGs decoded", png_ok);
  for (size_t n = 0; n < j.n / 2; n++) {
    /* libjpeg pads a truncated entropy-coded segment with gray (a warning); a file cut
     * before its scan header must fail */
    if (nnp_image_decode(j.p, n, &img) != NNP_OK) jpeg_fail++;
    nnp_image_free(&img);
  }
  CHECK(jpeg_fail > 0);
  /* corrupted bytes: each must decode or fail cleanly (ASan checks the rest) */
  for (size_t i = 0; i < j.n; i += 3) {
    uint8_t save = j.p[i];
    j.p[i] ^= 0x5A;
    if (nnp_image_decode(j.p, j.n, &img) == NNP_OK) CHECK(img.width > 0 && img.rgb);
    nnp_image_free(&img);
    j.p[i] = save;
  }
  for (size_t i = 8; i < p.n; i += 2) {
    uint8_t save = p.p[i];
    p.p[i] ^= 0xA5;
    if (nnp_image_decode(p.p, p.n, &img) == NNP_OK) CHECK(img.width > 0 && img.rgb);
    nnp_image_free(&img);
    p.p[i] = save;
  }
  /* dimensions beyond the limits are rejected before any pixel buffer exists */
  png_patch_dims(&p, 20000, 20000);
  nnp_status s = nnp_image_decode(p.p, p.n, &img);
  CHECK_MSG(s == NNP_ERR_FORMAT || s == NNP_ERR_LIMIT, "huge PNG -> %s", nnp_status_name(s));
  png_patch_dims(&p, 16000, 16000); /* each side within, the product beyond */
  s = nnp_image_decode(p.p, p.n, &img);
  CHECK_MSG(s == NNP_ERR_LIMIT, "16000^2 PNG -> %s: %s", nnp_status_name(s), nnp_last_error());
  jpeg_patch_dims(&j, 60000, 60000);
  s = nnp_image_decode(j.p, j.n, &img);
  CHECK_MSG(s == NNP_ERR_LIMIT, "60000^2 JPEG -> %s: %s", nnp_status_name(s), nnp_last_error());
  jpeg_patch_dims(&j, 0, 8);
  CHECK(nnp_image_decode(j.p, j.n, &img) != NNP_OK);
  static const uint8_t garbage[] = "GIF89a not supported";
  CHECK(nnp_image_decode(garbage, sizeof garbage, &img) == NNP_ERR_FORMAT);
  CHECK(nnp_image_decode(garbage, 0, &img) == NNP_ERR_FORMAT);
  free(p.p);
  free(j.p);
}

/* ---- preprocessing ----------------------------------------------------------------- */

static void test_preprocess(void) {
  /* 512 x 256 (w x h): left half red, right half blue. Resize: short side 256 -> stays
   * 512 x 256; crop 224: x from 144, so crop columns < 112 are red, >= 112 blue. */
  enum { W = 512, H = 256, C = 224 };
  nnp_image img = {W, H, malloc(W * H * 3)};
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      uint8_t *q = img.rgb + ((size_t)y * W + x) * 3;
      q[0] = x < W / 2 ? 255 : 0;
      q[1] = 0;
      q[2] = x < W / 2 ? 0 : 255;
    }
  nnp_image_norm n;
  nnp_image_norm_default(&n);
  float *out = malloc(sizeof(float) * 3 * C * C);
  CHECK_OK(nnp_image_to_chw(&img, &n, C, C, out));
  float red1 = (1.0f - n.mean[0]) / n.std[0], red0 = (0.0f - n.mean[0]) / n.std[0];
  CHECK_NEAR(out[0 * C * C + 10 * C + 111], red1, 1e-5);
  CHECK_NEAR(out[0 * C * C + 10 * C + 112], red0, 1e-5);
  CHECK_NEAR(out[2 * C * C + 200 * C + 223], (1.0f - n.mean[2]) / n.std[2], 1e-5);
  CHECK_NEAR(out[1 * C * C + 0], (0.0f - n.mean[1]) / n.std[1], 1e-5);
  /* half size: 256 x 128 upsampled x2 -> the boundary pixels blend, the rest is exact */
  nnp_image small = {W / 2, H / 2, malloc(W / 2 * H / 2 * 3)};
  for (int y = 0; y < H / 2; y++)
    for (int x = 0; x < W / 2; x++) memcpy(small.rgb + ((size_t)y * W / 2 + x) * 3, img.rgb + ((size_t)2 * y * W + 2 * x) * 3, 3);
  CHECK_OK(nnp_image_to_chw(&small, &n, C, C, out));
  CHECK_NEAR(out[0 * C * C + 50 * C + 100], red1, 1e-5);
  CHECK_NEAR(out[0 * C * C + 50 * C + 120], red0, 1e-5);
  float mid = out[0 * C * C + 50 * C + 111];
  CHECK_MSG(mid > red0 && mid < red1, "boundary pixel %g should blend", mid);
  n.std[1] = 0;
  CHECK(nnp_image_to_chw(&img, &n, C, C, out) == NNP_ERR_INVALID);
  free(out);
  nnp_image_free(&img);
  nnp_image_free(&small);
}

/* ---- folders and subsets ----------------------------------------------------------- */

static void write_file(const char *path, const void *d, size_t n) {
  FILE *f = fopen(path, "wb");
  fwrite(d, 1, n, f);
  fclose(f);
}

static void test_folder(void) {
  char dir[] = "/tmp/nnp_calib_XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char path[512];
  float v[2];
  int64_t dims[1] = {2};
  for (int i = 0; i < 10; i++) {
    v[0] = (float)i;
    v[1] = -1;
    nnp_tensor t = {NNP_F32, 1, {2}, v};
    (void)dims;
    snprintf(path, sizeof path, "%s/t%02d.npy", dir, 9 - i);
    CHECK_OK(nnp_npy_write(path, &t));
  }
  nnp_calib_options o;
  nnp_calib_options_default(&o);
  nnp_calib_set a, b;
  CHECK_OK(nnp_calib_open(dir, &o, &a));
  CHECK(a.n == 10 && a.kind == NNP_CALIB_NPY);
  for (int i = 1; i < a.n; i++) CHECK(strcmp(a.paths[i - 1], a.paths[i]) < 0);
  nnp_tensor t;
  CHECK_OK(nnp_calib_load(&a, 0, &t)); /* t00 holds 9 */
  CHECK(t.rank == 1 && ((float *)t.data)[0] == 9.0f);
  nnp_tensor_free(&t);
  nnp_calib_close(&a);
  o.size = 4;
  o.seed = 7;
  CHECK_OK(nnp_calib_open(dir, &o, &a));
  CHECK_OK(nnp_calib_open(dir, &o, &b));
  CHECK(a.n == 4 && b.n == 4);
  for (int i = 0; i < 4 && a.n == 4 && b.n == 4; i++) CHECK(strcmp(a.paths[i], b.paths[i]) == 0);
  for (int i = 1; i < a.n; i++) CHECK(strcmp(a.paths[i - 1], a.paths[i]) < 0);
  nnp_calib_close(&b);
  int differs = 0;
  for (uint64_t seed = 8; seed < 12 && !differs; seed++) {
    o.seed = seed;
    CHECK_OK(nnp_calib_open(dir, &o, &b));
    for (int i = 0; i < 4 && b.n == 4; i++) differs |= strcmp(a.paths[i], b.paths[i]) != 0;
    nnp_calib_close(&b);
  }
  CHECK_MSG(differs, "four other seeds all chose the same subset");
  nnp_calib_close(&a);
  /* mixing images and tensors is refused; so is an empty folder */
  enum { W = 300, H = 200 };
  uint8_t *pix = calloc(W * H, 3);
  membuf m = png_encode(W, H, PNG_COLOR_TYPE_RGB, 8, pix, 3, NULL, 0);
  snprintf(path, sizeof path, "%s/img.PNG", dir);
  write_file(path, m.p, m.n);
  o.size = 0;
  CHECK(nnp_calib_open(dir, &o, &a) == NNP_ERR_INVALID);
  char dir2[] = "/tmp/nnp_calib_XXXXXX";
  CHECK(mkdtemp(dir2) != NULL);
  CHECK(nnp_calib_open(dir2, &o, &a) == NNP_ERR_INVALID);
  char p2[512];
  snprintf(p2, sizeof p2, "%s/img.PNG", dir2);
  write_file(p2, m.p, m.n);
  snprintf(p2, sizeof p2, "%s/bad.jpg", dir2);
  write_file(p2, "\xFF\xD8\xFF\xE0 broken", 10);
  CHECK_OK(nnp_calib_open(dir2, &o, &a));
  CHECK(a.n == 2 && a.kind == NNP_CALIB_IMAGES);
  CHECK(nnp_calib_load(&a, 0, &t) == NNP_ERR_FORMAT); /* bad.jpg sorts first */
  CHECK(strstr(nnp_last_error(), "bad.jpg") != NULL);
  CHECK_OK(nnp_calib_load(&a, 1, &t));
  CHECK(t.rank == 4 && t.dims[1] == 3 && t.dims[2] == 224 && t.dims[3] == 224);
  CHECK(t.data && ((float *)t.data)[0] == (0.0f - 0.485f) / 0.229f);
  nnp_tensor_free(&t);
  CHECK(nnp_calib_load(&a, 2, &t) == NNP_ERR_INVALID);
  nnp_calib_close(&a);
  CHECK(nnp_calib_open("/nonexistent/calib", &o, &a) == NNP_ERR_IO);
  unlink(p2);
  snprintf(p2, sizeof p2, "%s/img.PNG", dir2);
  unlink(p2);
  rmdir(dir2);
  unlink(path);
  for (int i = 0; i < 10; i++) {
    snprintf(path, sizeof path, "%s/t%02d.npy", dir, i);
    unlink(path);
  }
  rmdir(dir);
  free(m.p);
  free(pix);
}

int main(void) {
  test_png_rgb_exact();
  test_png_color_types();
  test_jpeg();
  test_hostile();
  test_preprocess();
  test_folder();
  TEST_MAIN_END();
}
