#pragma once
// How quantities are written in the window: one unit per axis or column, chosen from the value's
// size, with the unit always shown. SI inside (seconds, bytes); conversion happens only here.

#include <QString>

namespace stepcast::gui {

// A time unit for values up to `largest_seconds`: s, ms or us, and the factor to apply.
struct TimeUnit {
  QString name;   // "s", "ms", "us"
  double per_second = 1.0;
};
TimeUnit time_unit_for(double largest_seconds);

QString format_seconds(double seconds);             // "13.7 s", "412 ms", "35.2 us"
QString format_bytes(double bytes);                 // "62.1 GiB", "512 MiB"
QString format_rate(double per_second, const QString& what);  // "9,563 tokens/s", "1.2 M tokens/s"
QString format_percent(double ratio, int decimals = 1);       // "51.2 %"

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

}  // namespace stepcast::gui
