#include "gui/models/csv_export.h"

#include <QFile>
#include <QStringList>

namespace stepcast::gui {
namespace {

QString field(QString text) {
  if (text.contains(QLatin1Char(',')) || text.contains(QLatin1Char('"')) || text.contains(QLatin1Char('\n')) ||
      text.contains(QLatin1Char('\r'))) {
    text.replace(QStringLiteral("\""), QStringLiteral("\"\""));
    return QLatin1Char('"') + text + QLatin1Char('"');
  }
  return text;
}

}  // namespace

QString table_to_csv(const QAbstractItemModel& model) {
  QString out;
  QStringList row;
  for (int c = 0; c < model.columnCount(); ++c) row << field(model.headerData(c, Qt::Horizontal).toString());
  out += row.join(QLatin1Char(',')) + QStringLiteral("\r\n");
  for (int r = 0; r < model.rowCount(); ++r) {
    row.clear();
    for (int c = 0; c < model.columnCount(); ++c) row << field(model.index(r, c).data().toString().trimmed());
    out += row.join(QLatin1Char(',')) + QStringLiteral("\r\n");
  }
  return out;
}

bool write_csv_file(const QAbstractItemModel& model, const QString& path, QString* error) {
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
    if (error != nullptr) *error = file.errorString();
    return false;
  }
  const QByteArray bytes = table_to_csv(model).toUtf8();
  if (file.write(bytes) != bytes.size()) {
    if (error != nullptr) *error = file.errorString();
    return false;
  }
  return true;
}

}  // namespace stepcast::gui
