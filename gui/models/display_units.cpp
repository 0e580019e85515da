#include "gui/models/display_units.h"

#include <QLocale>

#include <cmath>

namespace stepcast::gui {

TimeUnit time_unit_for(double largest_seconds) {
  const double v = std::abs(largest_seconds);
  if (v >= 1.0) return {QStringLiteral("s"), 1.0};
  if (v >= 1e-3) return {QStringLiteral("ms"), 1e3};
  return {QStringLiteral("us"), 1e6};
}

namespace {
QString three_digits(double v) {
  const double a = std::abs(v);
  const int decimals = a >= 100.0 ? 0 : a >= 10.0 ? 1 : 2;
  return QLocale::c().toString(v, 'f', decimals);
}
}  // namespace

QString format_seconds(double seconds) {
  if (seconds == 0.0) return QStringLiteral("0 s");
  const TimeUnit u = time_unit_for(seconds);
  return three_digits(seconds * u.per_second) + QLatin1Char(' ') + u.name;
}

QString format_bytes(double bytes) {
  const double a = std::abs(bytes);
  if (a == 0.0) return QStringLiteral("0 B");
  if (a >= kGiB) return three_digits(bytes / kGiB) + QStringLiteral(" GiB");
  if (a >= 1024.0 * 1024.0) return three_digits(bytes / (1024.0 * 1024.0)) + QStringLiteral(" MiB");
  return three_digits(bytes / 1024.0) + QStringLiteral(" KiB");
}

QString format_rate(double per_second, const QString& what) {
  QLocale locale = QLocale::c();
  locale.setNumberOptions(QLocale::DefaultNumberOptions);
  const double a = std::abs(per_second);
  if (a >= 1e7) return three_digits(per_second / 1e6) + QStringLiteral(" M ") + what + QStringLiteral("/s");
  if (a >= 100.0) return locale.toString(per_second, 'f', 0) + QLatin1Char(' ') + what + QStringLiteral("/s");
  return three_digits(per_second) + QLatin1Char(' ') + what + QStringLiteral("/s");
}

QString format_percent(double ratio, int decimals) {
  return QLocale::c().toString(ratio * 100.0, 'f', decimals) + QStringLiteral(" %");
}

}  // namespace stepcast::gui
