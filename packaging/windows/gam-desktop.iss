; Inno Setup script for GAM Desktop (the release workflow runs: iscc /DAppVersion=x.y.z ...)
#ifndef AppVersion
  #define AppVersion "0.1.0"
#endif

[Setup]
AppId={{6F1F3C2A-4E7B-4C39-9D2E-6C1B0B7A5E11}
AppName=GAM Desktop
AppVersion={#AppVersion}
AppPublisher=GAM Desktop
DefaultDirName={autopf}\GAM Desktop
DefaultGroupName=GAM Desktop
DisableProgramGroupPage=yes
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
OutputDir=..\..\dist
OutputBaseFilename=GAM-Desktop-{#AppVersion}-windows-x64-setup
SetupIconFile=..\..\resources\icons\gam-desktop.ico
UninstallDisplayIcon={app}\gam-desktop.exe
Compression=lzma2
SolidCompression=yes
; 64-bit Windows only (x64, or Arm64 running x64 programs): refused elsewhere with a message
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
; Windows 10 1809 or newer: what Qt 6 (PySide6) runs on; older ones are refused with a message
MinVersion=10.0.17763
WizardStyle=modern

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked

[Files]
Source: "..\..\dist\gam-desktop\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{autoprograms}\GAM Desktop"; Filename: "{app}\gam-desktop.exe"
Name: "{autodesktop}\GAM Desktop"; Filename: "{app}\gam-desktop.exe"; Tasks: desktopicon

[Run]
Filename: "{app}\gam-desktop.exe"; Description: "{cm:LaunchProgram,GAM Desktop}"; Flags: nowait postinstall skipifsilent
