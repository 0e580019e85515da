#pragma once
// Any table model as CSV (RFC 4180): a header row from the horizontal headers, then one row per
// model row with the text the window shows (units are in the headers). Fields holding a comma, a
// quote or a line break are quoted, quotes doubled.

#include <QAbstractItemModel>
#include <QString>

namespace stepcast::gui {

QString table_to_csv(const QAbstractItemModel& model);
// Writes table_to_csv() to `path` (UTF-8); false with `error` set when the file cannot be written.
bool write_csv_file(const QAbstractItemModel& model, const QString& path, QString* error = nullptr);

}  // namespace stepcast::gui
