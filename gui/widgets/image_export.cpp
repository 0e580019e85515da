#include "gui/widgets/image_export.h"

#include <QFileInfo>
#include <QImage>
#include <QPainter>
#include <QSvgGenerator>
#include <QWidget>

namespace stepcast::gui {

bool export_widget_image(QWidget& widget, const QString& path, QString* error, double scale) {
  const QString suffix = QFileInfo(path).suffix().toLower();
  const QSize size = widget.size();
  if (suffix == QLatin1String("svg")) {
    QSvgGenerator svg;
    svg.setFileName(path);
    svg.setSize(size);
    svg.setViewBox(QRect(QPoint(0, 0), size));
    svg.setTitle(widget.accessibleName().isEmpty() ? widget.objectName() : widget.accessibleName());
    svg.setDescription(QStringLiteral("Exported by stepcast-gui"));
    QPainter painter;
    if (!painter.begin(&svg)) {
      if (error != nullptr) *error = QStringLiteral("cannot write %1").arg(path);
      return false;
    }
    widget.render(&painter);
    painter.end();
    if (!QFileInfo::exists(path)) {
      if (error != nullptr) *error = QStringLiteral("cannot write %1").arg(path);
      return false;
    }
    return true;
  }
  if (suffix == QLatin1String("png")) {
    QImage image(size * scale, QImage::Format_ARGB32_Premultiplied);
    image.setDevicePixelRatio(scale);
    image.fill(Qt::white);
    QPainter painter(&image);
    widget.render(&painter);
    painter.end();
    if (!image.save(path, "PNG")) {
      if (error != nullptr) *error = QStringLiteral("cannot write %1").arg(path);
      return false;
    }
    return true;
  }
  if (error != nullptr) *error = QStringLiteral("unknown image type '.%1': use .png or .svg").arg(suffix);
  return false;
}

}  // namespace stepcast::gui
