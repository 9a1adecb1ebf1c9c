// PNG reading and writing for gpulab-cli through QImage (QtGui, linked with the chart library);
// a build without Qt answers with what to install.
#include "app/cli_png.hpp"

#include "engine/base/errors.hpp"
#include "io/input_file.hpp"

#ifdef GPULAB_HAVE_CHARTS
#include <QBuffer>
#include <QImage>
#include <QImageReader>
#endif

namespace gpulab::cli {

#ifdef GPULAB_HAVE_CHARTS

// Far more than a photo of a digit needs; Qt's own limit on decoded pixels guards the rest.
constexpr std::uintmax_t kMaxPngBytes = std::uintmax_t(64) << 20;

std::string png_unavailable_reason() { return {}; }

GrayImage read_png_gray(const std::filesystem::path& path) {
  // Through the one reader of input files: a FIFO or a folder is refused in one line, never
  // waited on or called "not found".
  std::string bytes;
  try {
    bytes = read_input_file(path, kMaxPngBytes, "a PNG picture");
  } catch (const InputFileError& e) {
    throw ConfigError(e.what());
  }
  QByteArray data = QByteArray::fromRawData(bytes.data(), qsizetype(bytes.size()));
  QBuffer buffer(&data);
  buffer.open(QIODevice::ReadOnly);
  QImageReader reader(&buffer, "png");
  reader.setDecideFormatFromContent(false);  // a JPEG named .png is not a PNG
  const QImage image = reader.read();
  if (image.isNull())
    throw ConfigError(path.string() + ": not a readable PNG image (" +
                      reader.errorString().toStdString() + ")");
  const QImage rgba = image.convertToFormat(QImage::Format_RGBA8888);
  const int width = rgba.width(), height = rgba.height();
  GrayImage gray{width, height, std::vector<float>(size_t(width) * height)};
  std::vector<float> alpha(gray.pixels.size());
  double opaque_sum = 0, opaque_weight = 0;
  for (int y = 0; y < height; ++y) {
    const uchar* row = rgba.constScanLine(y);
    for (int x = 0; x < width; ++x) {
      const uchar* p = row + 4 * x;
      const size_t i = size_t(y) * width + x;
      gray.pixels[i] = (0.299f * p[0] + 0.587f * p[1] + 0.114f * p[2]) / 255.0f;
      alpha[i] = p[3] / 255.0f;
      opaque_sum += alpha[i] * gray.pixels[i];
      opaque_weight += alpha[i];
    }
  }
  // Ink drawn on a transparent canvas: the ground behind it is the opposite of the ink's shade.
  if (image.hasAlphaChannel()) {
    const float ground = opaque_weight > 0 && opaque_sum / opaque_weight < 0.5 ? 1.0f : 0.0f;
    for (size_t i = 0; i < gray.pixels.size(); ++i)
      gray.pixels[i] = alpha[i] * gray.pixels[i] + (1 - alpha[i]) * ground;
  }
  return gray;
}

std::string encode_png_gray(std::span<const uint8_t> pixels, int width, int height, int scale) {
  QImage image(width * scale, height * scale, QImage::Format_Grayscale8);
  for (int y = 0; y < height * scale; ++y) {
    uchar* row = image.scanLine(y);
    for (int x = 0; x < width * scale; ++x) row[x] = pixels[size_t(y / scale) * width + x / scale];
  }
  QByteArray bytes;
  QBuffer buffer(&bytes);
  buffer.open(QIODevice::WriteOnly);
  if (!image.save(&buffer, "PNG")) throw std::runtime_error("Qt could not encode a PNG image");
  return std::string(bytes.constData(), size_t(bytes.size()));
}

#else

std::string png_unavailable_reason() {
  return "this gpulab-cli was built without Qt 6, which it reads and writes PNG files with "
         "(install qt6-base-dev, qt6-svg-dev and libqcustomplot-dev, then rebuild)";
}

GrayImage read_png_gray(const std::filesystem::path& path) {
  throw ConfigError(path.string() + ": " + png_unavailable_reason());
}

std::string encode_png_gray(std::span<const uint8_t>, int, int, int) {
  throw ConfigError(png_unavailable_reason());
}

#endif

}  // namespace gpulab::cli
